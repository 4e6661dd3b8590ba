package emulator

import (
	"crypto/tls"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/engine/table"
)

// TestEngineGoldenTables compiles the table of every engine golden case and
// asks Explain, for each rule, about a request made to match it: the
// request must reach the rule's virtual host and a rule at or before it
// (an earlier rule may match too). This keeps the emulator honest about the
// tables the engine really produces.
func TestEngineGoldenTables(t *testing.T) {
	files := engineGoldenTables(t)
	rules := 0
	for _, gt := range files {
		f, out := gt.file, gt
		rt := compile(out.Table, nil)
		for _, g := range out.Table.Gateways {
			for _, p := range g.Ports {
				for _, l := range p.Listeners {
					for _, vh := range l.VirtualHosts {
						for i, r := range vh.Rules {
							req, ok := requestFor(vh, r)
							if !ok {
								continue
							}
							rules++
							tr := explainAsClient(rt, g.Address, p.Port, req)
							if p.Transport != "TCP" || rt.lookup(g.Address, p.Port).notServed != "" {
								continue // the data plane does not serve the port (test certificates that are not PEM)
							}
							if tr.Listener != l.Name {
								// Listener Isolation: a more specific listener
								// of the port may take the host first.
								k := slices.IndexFunc(p.Listeners, func(x *table.ListenerTable) bool { return x.Name == tr.Listener })
								if k < 0 || p.Listeners[k] == l || k > slices.Index(p.Listeners, l) {
									t.Errorf("%s: a request for %s reached listener %q", filepath.Base(f), r.Name, tr.Listener)
								}
								continue
							}
							if l.PreRoutingRefused != "" {
								// A pre-routing filter refuses every request
								// of the listener before any rule is matched.
								if tr.Status != http.StatusInternalServerError {
									t.Errorf("%s: a request for %s on a listener whose pre-routing filters refuse: %d (%s)", filepath.Base(f), r.Name, tr.Status, tr.Reason)
								}
								continue
							}
							j := slices.IndexFunc(vh.Rules, func(x *table.RouteRule) bool { return x.Name == tr.Rule })
							if tr.VirtualHost != vh.Name || j < 0 || j > i {
								t.Errorf("%s: a request for %s reached %q / %q (%s)", filepath.Base(f), r.Name, tr.VirtualHost, tr.Rule, tr.Reason)
							}
						}
					}
				}
			}
		}
	}
	t.Logf("%d golden tables, %d rules explained", len(files), rules)
}

// explainAsClient explains req the way a client sends it to the port: over
// TLS with the Host as SNI on a TLS port, else in clear text.
func explainAsClient(rt *router, addr string, port int32, req *http.Request) *Trace {
	if pr := rt.lookup(addr, port); pr != nil && pr.tls != nil {
		req.TLS = &tls.ConnectionState{ServerName: req.Host}
	}
	return explainProbe(rt, requestProbe(addr, port, req))
}

// goldenTable is the routing table of one engine golden file.
type goldenTable struct {
	file  string
	Table *table.Table
}

// engineGoldenTables reads the table of every engine golden file that has
// one (a file that does not parse, maybe mid-edit by another package's
// test run, is skipped with a log line).
func engineGoldenTables(t *testing.T) []goldenTable {
	t.Helper()
	files, _ := filepath.Glob("../engine/testdata/*.out.yaml")
	if len(files) == 0 {
		t.Skip("no engine golden files")
	}
	var out []goldenTable
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Table *table.Table `json:"table"`
		}
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Logf("%s: skipped: %v", f, err)
			continue
		}
		if doc.Table != nil {
			out = append(out, goldenTable{file: f, Table: doc.Table})
		}
	}
	return out
}

// requestFor makes a request that the rule matches, when that is simple to
// do (no regular expressions).
func requestFor(vh *table.VirtualHost, r *table.RouteRule) (*http.Request, bool) {
	host := vh.Hostname
	switch {
	case host == "":
		host = "zz-any.gwdev.test"
	case strings.HasPrefix(host, "*."):
		host = "zz-wild" + host[1:]
	}
	u := &url.URL{Scheme: "http", Host: host, Path: "/"}
	req := &http.Request{Method: http.MethodGet, URL: u, Host: host, Header: http.Header{},
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}
	if g := r.GRPC; g != nil {
		req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/2.0", 2, 0
		req.Method = http.MethodPost
		req.Header.Set("Content-Type", "application/grpc")
		svc, method := "svc.Any", "Any"
		if g.Type == table.MatchRegularExpression {
			return nil, false
		}
		if g.Service != "" {
			svc = g.Service
		}
		if g.Method != "" {
			method = g.Method
		}
		u.Path = "/" + svc + "/" + method
		if !setValues(g.Headers, req.Header.Set) {
			return nil, false
		}
		return req, true
	}
	m := r.HTTP
	if m == nil || m.Path.Type == table.MatchRegularExpression {
		return nil, false
	}
	u.Path = m.Path.Value
	if m.Method != "" {
		req.Method = m.Method
	}
	q := url.Values{}
	if !setValues(m.Headers, req.Header.Set) || !setValues(m.QueryParams, q.Set) {
		return nil, false
	}
	u.RawQuery = q.Encode()
	return req, true
}

// setValues sets each exact match's value; false when one is a regular
// expression.
func setValues(ms []table.ValueMatch, set func(name, value string)) bool {
	for _, m := range ms {
		if m.Type == table.MatchRegularExpression {
			return false
		}
		set(m.Name, m.Value)
	}
	return true
}
