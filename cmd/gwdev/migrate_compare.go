package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp/syntax"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/watch"
)

// migratedFile is the name the converted manifests are loaded under by
// --compare, as if written with -o migrated.yaml.
const migratedFile = "migrated.yaml"

// compareSide is one side of --compare: a table served on loopback.
type compareSide struct {
	name                string
	srv                 *emulator.Server
	addr                string
	httpPort, httpsPort int
	// tls is set when the side serves HTTPS.
	tls   bool
	rules map[string]*table.RouteRule
}

// compareRequest is one request --compare sends to both sides.
type compareRequest struct {
	HTTPS   bool              `json:"https"`
	Host    string            `json:"host"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers,omitempty"`
	// from is the Ingress path the request was made from.
	from engine.Source
}

// compareAnswer is what one side did with a request.
type compareAnswer struct {
	Status   int    `json:"status"`
	Location string `json:"location,omitempty"`
	// Services are the backends the matched rule splits requests between
	// ("ns/name 90%"), or the one that answered.
	Services string `json:"services,omitempty"`
	// Path is the path the backend saw.
	Path   string `json:"path,omitempty"`
	Host   string `json:"backendHost,omitempty"`
	Rule   string `json:"rule,omitempty"`
	Source string `json:"source,omitempty"`
}

// compareDifference is a request the two sides answered differently.
type compareDifference struct {
	Request compareRequest `json:"request"`
	Ingress compareAnswer  `json:"ingress"`
	Gateway compareAnswer  `json:"gateway"`
	// Fields names what differs.
	Fields []string `json:"fields"`
}

func (o *migrateOptions) runCompare(cmd *cobra.Command, lr *watch.LoadResult) error {
	now := metav1.NewTime(time.Now().UTC().Truncate(time.Second))
	ing, err := startCompareSide("ingress-nginx", func(httpPort, httpsPort int) (*engine.Result, error) {
		return engine.Translate(lr.Snapshot, engine.Options{Now: now, IngressHTTPPort: int32(httpPort), IngressHTTPSPort: int32(httpsPort)}), nil
	}, "127.0.20.1", nil)
	if err != nil {
		return err
	}
	defer ing.close()
	var mig *engine.IngressMigration
	converted := map[string]bool{}
	gw, err := startCompareSide("gateway-api", func(httpPort, httpsPort int) (*engine.Result, error) {
		res := engine.Translate(lr.Snapshot, engine.Options{Now: now})
		mig = engine.MigrateIngresses(res, engine.MigrationOptions{GatewayNamespace: o.namespace, GatewayClass: o.class})
		var buf bytes.Buffer
		if err := writeMigration(&buf, "(compare)", mig); err != nil {
			return nil, err
		}
		loader, err := newLoader(nil)
		if err != nil {
			return nil, err
		}
		conv := loader.LoadBytes(migratedFile, buf.Bytes())
		if len(conv.Problems) > 0 {
			return nil, fmt.Errorf("the converted manifests do not load: %s", conv.Problems[0])
		}
		for _, g := range conv.Snapshot.Gateways {
			converted[g.Namespace+"/"+g.Name] = true
		}
		snap := withoutIngresses(lr.Snapshot, conv.Snapshot)
		for _, g := range conv.Snapshot.Gateways {
			for i := range g.Spec.Listeners {
				l := &g.Spec.Listeners[i] // 80 and 443 move to the side's free ports
				if l.TLS != nil {
					l.Port = int32(httpsPort)
				} else {
					l.Port = int32(httpPort)
				}
			}
		}
		merged := watch.Merge(&watch.LoadResult{Snapshot: snap}, conv)
		return engine.Translate(merged.Snapshot, engine.Options{Now: now}), nil
	}, "127.0.0.1", converted)
	if err != nil {
		return err
	}
	defer gw.close()
	reqs := compareRequests(lr.Snapshot, ing)
	var diffs []compareDifference
	for _, r := range reqs {
		a, b := ing.send(r), gw.send(r)
		if fields := a.differs(b); len(fields) > 0 {
			diffs = append(diffs, compareDifference{Request: r, Ingress: a, Gateway: b, Fields: fields})
		}
	}
	out := cmd.OutOrStdout()
	switch o.format {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(map[string]any{"requests": len(reqs), "differences": nonNil(diffs), "dropped": nonNil(mig.Dropped)}); err != nil {
			return err
		}
	case "github":
		for _, d := range diffs {
			fmt.Fprintf(out, "::error file=%s,line=%d::%s\n", d.Request.from.File, d.Request.from.Line, githubEscape(d.text()))
		}
		seen := map[string]bool{}
		for _, d := range mig.Dropped {
			msg := d.Ingress.String() + ": not carried over: " + d.What + ": " + d.Why
			if !seen[d.Source.String()+msg] {
				seen[d.Source.String()+msg] = true
				fmt.Fprintf(out, "::warning file=%s,line=%d::%s\n", d.Source.File, d.Source.Line, githubEscape(msg))
			}
		}
	default:
		fmt.Fprintf(out, "Sent %d requests generated from the Ingress rules to ingress-nginx (emulated) and to the converted Gateway API routes: %d differ.\n", len(reqs), len(diffs))
		for _, d := range diffs {
			fmt.Fprintln(out, d.text())
		}
		if len(mig.Dropped) > 0 {
			fmt.Fprintln(out, "\nNot carried over:")
			printDropped(out, mig.Dropped)
		}
	}
	if len(diffs) > 0 || len(mig.Dropped) > 0 {
		return exitError{exitProblems}
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// githubEscape escapes a workflow command's message.
func githubEscape(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// text renders a difference for people.
func (d compareDifference) text() string {
	r := d.Request
	scheme := "http"
	if r.HTTPS {
		scheme = "https"
	}
	var hdr []string
	for _, k := range slices.Sorted(mapsKeys(r.Headers)) {
		hdr = append(hdr, k+": "+r.Headers[k])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "GET %s://%s%s", scheme, r.Host, r.Path)
	if len(hdr) > 0 {
		fmt.Fprintf(&b, " [%s]", strings.Join(hdr, "; "))
	}
	fmt.Fprintf(&b, " (from %s)\n", r.from)
	for _, f := range d.Fields {
		fmt.Fprintf(&b, "  %-9s ingress-nginx %-30s gateway-api %s\n", f+":", quoteOrDash(d.Ingress.field(f)), quoteOrDash(d.Gateway.field(f)))
	}
	fmt.Fprintf(&b, "  rule:     ingress-nginx %s (%s)\n            gateway-api   %s (%s)", orDash(d.Ingress.Rule), orDash(d.Ingress.Source), orDash(d.Gateway.Rule), orDash(d.Gateway.Source))
	return b.String()
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func quoteOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return strconv.Quote(s)
}

// field is one compared field of an answer.
func (a compareAnswer) field(name string) string {
	switch name {
	case "status":
		return strconv.Itoa(a.Status)
	case "location":
		return a.Location
	case "backend":
		return a.Services
	case "path":
		return a.Path
	case "host":
		return a.Host
	}
	return ""
}

// differs lists the fields whose values differ.
func (a compareAnswer) differs(b compareAnswer) []string {
	var out []string
	for _, f := range []string{"status", "location", "backend", "path", "host"} {
		if a.field(f) != b.field(f) {
			out = append(out, f)
		}
	}
	return out
}

// startCompareSide translates with free ports on addr and serves the table.
func startCompareSide(name string, translate func(httpPort, httpsPort int) (*engine.Result, error), addr string, converted map[string]bool) (*compareSide, error) {
	// A port found free can be taken before it is bound: three tries.
	var err error
	for range 3 {
		var s *compareSide
		if s, err = startCompareSideOnce(name, translate, addr, converted); err == nil {
			return s, nil
		}
	}
	return nil, err
}

func startCompareSideOnce(name string, translate func(httpPort, httpsPort int) (*engine.Result, error), addr string, converted map[string]bool) (*compareSide, error) {
	httpPort, err := freeTCPPort(addr)
	if err != nil {
		return nil, err
	}
	httpsPort, err := freeTCPPort(addr)
	if err != nil {
		return nil, err
	}
	res, err := translate(httpPort, httpsPort)
	if err != nil {
		return nil, err
	}
	s := &compareSide{name: name, httpPort: httpPort, httpsPort: httpsPort, rules: map[string]*table.RouteRule{}}
	// Each side serves only its own: the ingress-nginx classes, or the
	// converted Gateways (other Gateways of the folder stay out of both).
	ingressSide := addr == "127.0.20.1"
	served := &table.Table{}
	for _, g := range res.Table.Gateways {
		if (g.Gateway.Kind == "IngressClass") != ingressSide || !ingressSide && !strings.HasPrefix(g.Name, "gateway/") {
			continue
		}
		if !ingressSide && !converted[g.Gateway.Namespace+"/"+g.Gateway.Name] {
			continue
		}
		served.Gateways = append(served.Gateways, g)
	}
	for _, g := range served.Gateways {
		if g.Address != "" && s.addr == "" {
			s.addr = g.Address
		}
		for _, p := range g.Ports {
			for _, l := range p.Listeners {
				s.tls = s.tls || l.TLS != nil
				for _, vh := range l.VirtualHosts {
					for _, r := range vh.Rules {
						s.rules[r.Name] = r
					}
				}
			}
		}
	}
	if s.addr == "" {
		return nil, fmt.Errorf("%s: nothing to serve", name)
	}
	s.srv = emulator.New(emulator.Config{})
	if err := s.srv.Apply(served).Err(); err != nil {
		s.close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// freeTCPPort asks the kernel for a port on addr that nothing listens on.
func freeTCPPort(addr string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return 0, fmt.Errorf("finding a free port on %s: %w", addr, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *compareSide) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Close(ctx)
}

// send sends r to the side and describes the answer with the side's own
// ports replaced by the well-known ones, so both sides' Locations compare.
func (s *compareSide) send(r compareRequest) compareAnswer {
	scheme, port := "http", s.httpPort
	if r.HTTPS {
		scheme, port = "https", s.httpsPort
	}
	req, err := http.NewRequest("GET", scheme+"://"+net.JoinHostPort(s.addr, strconv.Itoa(port))+r.Path, nil)
	if err != nil {
		return compareAnswer{Status: -1, Path: err.Error()}
	}
	req.Host = r.Host
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	probe := req.Clone(context.Background())
	if r.HTTPS {
		probe.TLS = &tls.ConnectionState{ServerName: r.Host}
	}
	tr := explainTrace(s.srv, s.addr, int32(port), probe)
	c := &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{ServerName: r.Host, InsecureSkipVerify: true}}, //nolint:gosec // comparing routing, not certificates
		Timeout:       5 * time.Second,
	}
	defer c.CloseIdleConnections()
	resp, err := c.Do(req)
	if err != nil {
		return compareAnswer{Status: -1, Path: err.Error()}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	a := compareAnswer{Status: resp.StatusCode, Location: s.wellKnownPorts(resp.Header.Get("Location")), Rule: tr.Rule, Source: tr.Source}
	var echo struct {
		Namespace, Service, Path, Host string
	}
	if json.Unmarshal(body, &echo) == nil && echo.Service != "" {
		a.Path, a.Host = echo.Path, echo.Host
		a.Services = echo.Namespace + "/" + echo.Service
	}
	if rule := s.rules[tr.Rule]; rule != nil && len(rule.Backends) > 1 && a.Services != "" {
		a.Services = weightedServices(rule.Backends)
	}
	return a
}

// explainTrace is the side's decision for req (rule and source).
func explainTrace(srv *emulator.Server, addr string, port int32, req *http.Request) emulator.Trace {
	if t := srv.Explain(addr, port, req); t != nil {
		return *t
	}
	return emulator.Trace{}
}

// weightedServices names the backends of a split with their shares.
func weightedServices(bs []*table.Backend) string {
	total := int32(0)
	for _, b := range bs {
		total += b.Weight
	}
	var parts []string
	for _, b := range bs {
		if b.Weight > 0 && total > 0 {
			parts = append(parts, fmt.Sprintf("%s/%s %d%%", b.Service.Namespace, b.Service.Name, b.Weight*100/total))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// wellKnownPorts writes the side's ports in a Location as 80 and 443,
// which leaves them out.
func (s *compareSide) wellKnownPorts(loc string) string {
	u, err := url.Parse(loc)
	if err != nil || u.Host == "" {
		return loc
	}
	switch {
	case u.Port() == strconv.Itoa(s.httpPort) && u.Scheme == "http", u.Port() == strconv.Itoa(s.httpsPort) && u.Scheme == "https":
		u.Host = u.Hostname()
	case u.Port() == strconv.Itoa(s.httpsPort) || u.Port() == strconv.Itoa(s.httpPort):
		p := "80"
		if u.Port() == strconv.Itoa(s.httpsPort) {
			p = "443"
		}
		u.Host = net.JoinHostPort(u.Hostname(), p)
	}
	return u.String()
}

// withoutIngresses is snap without its Ingresses and IngressClasses, which
// the converted objects replace, and without the objects conv holds (a
// folder that already has the output of migrate).
func withoutIngresses(snap, conv *engine.Snapshot) *engine.Snapshot {
	out := &engine.Snapshot{Sources: snap.Sources}
	converted := map[engine.ObjectKey]bool{}
	conv.Each(func(k engine.ObjectKey, _ metav1.Object) { converted[k] = true })
	snap.Each(func(k engine.ObjectKey, o metav1.Object) {
		switch o.(type) {
		case *networkingv1.Ingress, *networkingv1.IngressClass:
			return
		}
		if !converted[k] {
			out.AddObject(o)
		}
	})
	return out
}

// compareRequests generates the requests from the Ingress rules: each host
// and path (for a regex, its literal prefix and an example), with and
// without a trailing slash, upper case, longer, with dot segments and a
// double slash; canary headers and cookies; over HTTP and, when the class
// serves TLS, HTTPS.
func compareRequests(snap *engine.Snapshot, ing *compareSide) []compareRequest {
	var out []compareRequest
	seen := map[string]bool{}
	add := func(r compareRequest) {
		k := fmt.Sprint(r.HTTPS, r.Host, r.Path, r.Headers)
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	for _, in := range snap.Ingresses {
		if len(in.Spec.Rules) == 0 {
			continue
		}
		key := engine.ObjectKey{Kind: "Ingress", Namespace: in.Namespace, Name: in.Name}
		headers := canaryHeaders(in.Annotations)
		for i, rule := range in.Spec.Rules {
			host := rule.Host
			if host == "" {
				host = "any-host.example"
			}
			host = strings.Replace(host, "*", "wildcard", 1)
			if rule.HTTP == nil {
				continue
			}
			for j, p := range rule.HTTP.Paths {
				src := snap.SourceOf(key).At("spec.rules[" + strconv.Itoa(i) + "].http.paths[" + strconv.Itoa(j) + "]")
				for _, path := range pathVariants(p.Path) {
					for _, https := range []bool{false, true} {
						if https && !ing.tls {
							continue
						}
						add(compareRequest{HTTPS: https, Host: host, Path: path, from: src})
						for _, h := range headers {
							add(compareRequest{HTTPS: https, Host: host, Path: path, Headers: h, from: src})
						}
					}
				}
			}
		}
	}
	return out
}

// pathVariants are the request paths made from an Ingress path.
func pathVariants(path string) []string {
	base := path
	if re, err := syntax.Parse(path, syntax.Perl); err == nil && strings.ContainsAny(path, `()[]{}*+?|\^$`) {
		prefix, _ := literalPrefix(re)
		base = prefix
		if base == "" || base[0] != '/' {
			base = "/" + base
		}
	}
	if base == "" {
		base = "/"
	}
	vs := []string{base, base + "x", base + "/x", strings.ToUpper(base)}
	if strings.HasSuffix(base, "/") && len(base) > 1 {
		vs = append(vs, strings.TrimSuffix(base, "/"))
	} else {
		vs = append(vs, base+"/")
	}
	if i := strings.LastIndexByte(strings.TrimSuffix(base, "/"), '/'); i >= 0 && len(base) > 1 {
		vs = append(vs, base[:i]+"/."+base[i:], base[:i]+"/"+base[i:], base[:i]+"/z/.."+base[i:])
	}
	return vs
}

// literalPrefix is the literal text every match of re starts with.
func literalPrefix(re *syntax.Regexp) (string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune), true
	case syntax.OpConcat:
		var b strings.Builder
		for _, s := range re.Sub {
			p, whole := literalPrefix(s)
			b.WriteString(p)
			if !whole {
				return b.String(), false
			}
		}
		return b.String(), true
	case syntax.OpBeginLine, syntax.OpBeginText:
		return "", true
	}
	return "", false
}

// canaryHeaders are the headers and cookies that steer a canary Ingress's
// requests (none for other Ingresses).
func canaryHeaders(ann map[string]string) []map[string]string {
	p := engine.IngressNginxAnnotationPrefix
	if ann[p+"canary"] != "true" {
		return nil
	}
	var out []map[string]string
	if h := ann[p+"canary-by-header"]; h != "" {
		if v := ann[p+"canary-by-header-value"]; v != "" {
			out = append(out, map[string]string{h: v})
		}
		out = append(out, map[string]string{h: "always"}, map[string]string{h: "never"})
	}
	if c := ann[p+"canary-by-cookie"]; c != "" {
		out = append(out, map[string]string{"Cookie": c + "=always"}, map[string]string{"Cookie": c + "=never"})
	}
	return out
}
