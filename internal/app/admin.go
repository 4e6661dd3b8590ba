package app

import (
	"bytes"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/gwdev/gwdev/emulator/admin"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/report"
)

// AdminStatus is the admin API's view of a Session's State. It serves
// /status: every object of the last translation with its computed status,
// as `gwdev check -o yaml` (default) or `-o json` (?format=json) prints it;
// and it gives the admin API each State's findings and counts (/routes,
// /metrics). The emulator serves the rest of the admin API; the objects
// are the engine's, so they are wired here.
type AdminStatus struct {
	res atomic.Pointer[engine.Result]
	// Admin is told about every State published (nil: only /status is
	// served).
	Admin *admin.Admin
}

var _ http.Handler = (*AdminStatus)(nil)

// Publish takes a Session's new State: subscribe it with
// Session.Subscribe.
func (a *AdminStatus) Publish(st *State) {
	a.res.Store(st.Result)
	if a.Admin != nil {
		a.Admin.SetReload(adminReload(st.Result, st.LoadProblems(), st.Time, st.Translate, st.Apply))
	}
}

// ServeHTTP serves /status.
func (a *AdminStatus) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	res := a.res.Load()
	if res == nil {
		http.Error(w, "no translation yet", http.StatusServiceUnavailable)
		return
	}
	if r.URL.Query().Get("format") == "json" {
		var b bytes.Buffer
		if err := report.WriteObjectsJSON(&b, res, nil); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b.Bytes())
		return
	}
	b, err := report.ObjectsYAML(res)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(b)
}

// adminReload is what the admin API shows of one translation: object and
// finding counts for metrics (manifests that failed to load count as
// errors) and the findings for /routes.
func adminReload(res *engine.Result, loadProblems int, at time.Time, translate, apply time.Duration) *admin.Reload {
	counts := map[string]int{string(engine.SeverityError): loadProblems, string(engine.SeverityWarning): 0, string(engine.SeverityInfo): 0}
	for _, f := range res.Findings {
		counts[string(f.Severity)]++
	}
	return &admin.Reload{Time: at, Translate: translate, Apply: apply, Objects: res.Objects.Len(),
		Findings: counts, FindingList: res.Findings}
}
