package web

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/tui"
)

//go:embed assets
var assets embed.FS

// ContentSecurityPolicy is sent with every answer of the web view: only
// the page's own scripts, styles and connections, no inline script, no
// framing, nothing from another origin. 'wasm-unsafe-eval' lets the page
// compile WebAssembly (Graphviz, in assets/viz-global.js, lays the
// topology out); it allows no eval of JavaScript.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// MaxPages is how many pages /ui/events serves at once; more are refused
// with 503 (and counted).
const MaxPages = 32

// writeTimeout is how long a page may take to accept an event before it is
// dropped (and counted).
const writeTimeout = 10 * time.Second

// maxTraceBody bounds the trace a page posts to /ui/trace.
const maxTraceBody = 1 << 20

// Options say what the web view shows besides the Session's State.
type Options struct {
	// Dir is the folder served, as the user gave it.
	Dir string
	// CAFiles are the CA bundles a copied command may trust (--cacert), as
	// the dashboard's copy-as-curl does (nil: curl -k).
	CAFiles []string
	// Project is the project served: the View runs the Migration
	// comparison itself after each State (nil: it does not; the caller,
	// which runs one for the dashboard, hands it the results with
	// SetMigration).
	Project *project.Project
}

// View is the web view of one Session. Publish takes each State; Handler
// serves the pages.
type View struct {
	ctx  context.Context
	opts Options
	mig  *app.MigrationRunner

	mu    sync.Mutex
	state *app.State
	// body is the JSON of /ui/state for state (nil: not rendered yet; it is
	// rendered on the first request after a reload, not on the Session's
	// goroutine).
	body      []byte
	migration *app.MigrationState

	pages *pageHub
	// writeTimeout is the constant's value (tests shorten it).
	writeTimeout time.Duration
}

// New returns the web view; it runs Migration comparisons until ctx ends
// (call Wait after).
func New(ctx context.Context, opts Options) *View {
	v := &View{ctx: ctx, opts: opts, pages: newPageHub(MaxPages), writeTimeout: writeTimeout}
	v.mig = app.NewMigrationRunner(v.SetMigration)
	return v
}

// Wait waits for a running Migration comparison to end after New's ctx.
func (v *View) Wait() { v.mig.Wait() }

// Publish takes a Session's new State (subscribe it with
// Session.Subscribe) and tells the open pages.
func (v *View) Publish(st *app.State) {
	v.mu.Lock()
	v.state, v.body = st, nil
	v.mu.Unlock()
	if v.opts.Project != nil {
		v.mig.Submit(v.ctx, v.opts.Project, st.Update.Result, st.Reload)
	}
	v.pages.notify()
}

// SetMigration takes a Migration comparison's progress (an
// app.MigrationRunner's messages).
func (v *View) SetMigration(m app.MigrationState) {
	v.mu.Lock()
	if m.Running && v.migration != nil && v.migration.Comparison != nil {
		prev := *v.migration
		prev.Running = true // keep showing the last one meanwhile
		m = prev
	}
	v.migration, v.body = &m, nil
	v.mu.Unlock()
	v.pages.notify()
}

// Pages says how many pages are open and how many were dropped (slow) or
// refused (past MaxPages) so far.
func (v *View) Pages() (open int, dropped, refused int64) { return v.pages.usage() }

// Collectors are the web view's metrics for the admin API's /metrics:
// pages open, dropped for accepting nothing within the write deadline,
// and refused past MaxPages.
func (v *View) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gwdev_web_pages", Help: "Web view pages open (/ui/events streams)."},
			func() float64 { n, _, _ := v.Pages(); return float64(n) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gwdev_web_pages_dropped_total",
			Help: "Web view pages disconnected because they accepted no event within the write deadline."},
			func() float64 { _, d, _ := v.Pages(); return float64(d) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gwdev_web_pages_refused_total",
			Help: "Web view pages refused with 503 because the most pages gwdev serves at once were open."},
			func() float64 { _, _, r := v.Pages(); return float64(r) }),
	}
}

// Handler serves the web view under admin.WebPath (/ui/).
func (v *View) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	files := http.FileServerFS(static)
	mux.Handle("GET /ui/assets/", http.StripPrefix("/ui/assets/", files))
	mux.HandleFunc("GET /ui/{$}", func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		r2.URL.Path = "/"
		files.ServeHTTP(w, r2)
	})
	mux.HandleFunc("GET /ui/state", v.serveState)
	mux.HandleFunc("GET /ui/events", v.serveEvents)
	mux.HandleFunc("POST /ui/trace", v.serveTrace)
	return sameOrigin(secureHeaders(mux))
}

// secureHeaders adds the Content-Security-Policy and its companions to
// every answer.
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

// sameOrigin refuses (403) a request another site's page sent: one whose
// Origin header is not this server (the Host it was sent to), or that the
// browser marks cross-site (Sec-Fetch-Site). The admin API's Host guard
// refuses other Host names (DNS rebinding) before this.
func sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if why := crossOrigin(r); why != "" {
			http.Error(w, "gwdev web view: "+why+"; open http://"+r.Host+"/ui/ itself", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// crossOrigin says why r comes from another origin ("": it does not).
func crossOrigin(r *http.Request) string {
	if s := r.Header.Get("Sec-Fetch-Site"); s == "cross-site" || s == "same-site" {
		return "a request from another site (Sec-Fetch-Site: " + s + ")"
	}
	o := r.Header.Get("Origin")
	if o == "" {
		return "" // not sent by a page of another origin (browsers send it on every cross-origin request)
	}
	u, err := url.Parse(o)
	if err != nil || u.Scheme != "http" || !strings.EqualFold(u.Host, r.Host) {
		return fmt.Sprintf("Origin %q is not this address", o)
	}
	return ""
}

// serveState serves the last State as the page reads it.
func (v *View) serveState(w http.ResponseWriter, _ *http.Request) {
	body, err := v.stateBody()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if body == nil {
		http.Error(w, "no translation yet", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(body)
}

// stateBody renders /ui/state for the last State, once per State.
func (v *View) stateBody() ([]byte, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.body != nil || v.state == nil {
		return v.body, nil
	}
	ps, err := newPageState(v.state, v.migration, v.opts.Dir)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(ps)
	if err != nil {
		return nil, err
	}
	v.body = b
	return b, nil
}

// serveTrace answers a trace the page posts (one from /traces/stream) with
// the decision as explain writes it and the command that repeats it, as
// the dashboard copies it.
func (v *View) serveTrace(w http.ResponseWriter, r *http.Request) {
	var t emulator.Trace
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxTraceBody)).Decode(&t); err != nil {
		http.Error(w, "reading the trace: "+err.Error(), http.StatusBadRequest)
		return
	}
	v.mu.Lock()
	st := v.state
	v.mu.Unlock()
	var res *engine.Result
	if st != nil {
		res = st.Result
	}
	var decision bytes.Buffer
	app.WriteServedTrace(&decision, res, &t)
	out := struct {
		Decision string   `json:"decision"`
		Command  string   `json:"command,omitempty"`
		Notes    []string `json:"notes,omitempty"`
		NoCopy   string   `json:"noCopy,omitempty"`
	}{Decision: decision.String()}
	var err error
	if res != nil {
		out.Command, out.Notes, err = tui.CommandFor(t, res.Table, v.opts.CAFiles)
	} else {
		out.Command, out.Notes, err = tui.CommandFor(t, nil, v.opts.CAFiles)
	}
	if err != nil {
		out.NoCopy = err.Error()
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// serveEvents tells the page of every new State (and Migration comparison)
// with an "update" event whose data is the reload number; notices a page
// has not read yet coalesce into one. A page that accepts nothing within
// writeTimeout is dropped.
func (v *View) serveEvents(w http.ResponseWriter, r *http.Request) {
	p, ok := v.pages.open()
	if !ok {
		w.Header().Set("Retry-After", "10")
		http.Error(w, fmt.Sprintf("too many open pages: %d, the most gwdev serves at once; close one", MaxPages), http.StatusServiceUnavailable)
		return
	}
	defer v.pages.close(p)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	rc := http.NewResponseController(w)
	send := func(s string) bool {
		_ = rc.SetWriteDeadline(time.Now().Add(v.writeTimeout))
		if _, err := fmt.Fprint(w, s); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if !send(": gwdev web view\n\n") {
		v.pages.dropped.Add(1)
		return
	}
	keepalive := time.NewTicker(15 * time.Second)
	defer keepalive.Stop()
	for {
		var msg string
		select {
		case <-r.Context().Done():
			return
		case <-v.ctx.Done():
			return
		case <-keepalive.C:
			msg = ": keepalive\n\n"
		case <-p.ch:
			v.mu.Lock()
			reload := -1
			if v.state != nil {
				reload = v.state.Reload
			}
			v.mu.Unlock()
			msg = "event: update\ndata: " + strconv.Itoa(reload) + "\n\n"
		}
		if !send(msg) {
			if r.Context().Err() == nil {
				v.pages.dropped.Add(1)
			}
			return
		}
	}
}
