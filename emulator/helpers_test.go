package emulator

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	echosrv "github.com/gwdev/gwdev/emulator/echo"
	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/internal/freeport"
)

// Table builders: small helpers that fill in the stable names the engine
// would produce, so tests read as the routing they set up.

func newTable(gws ...*table.GatewayTable) *table.Table { return &table.Table{Gateways: gws} }

func gateway(name, addr string, ports ...*table.PortTable) *table.GatewayTable {
	g := &table.GatewayTable{Name: "gateway/default/" + name, Address: addr, Ports: ports,
		Gateway: table.ObjectKey{Kind: "Gateway", Namespace: "default", Name: name}}
	for _, p := range ports {
		for _, l := range p.Listeners {
			l.Name = g.Name + "/listener/" + l.SectionName
			l.Owner = g.Gateway
			for _, vh := range l.VirtualHosts {
				vh.Name = l.Name + "/vhost/" + displayHost(vh.Hostname)
			}
		}
	}
	return g
}

func displayHost(h string) string {
	if h == "" {
		return "*"
	}
	return h
}

func port(n int32, ls ...*table.ListenerTable) *table.PortTable {
	return &table.PortTable{Port: n, Transport: "TCP", Listeners: ls}
}

func listener(section, hostname string, vhs ...*table.VirtualHost) *table.ListenerTable {
	return &table.ListenerTable{SectionName: section, Hostname: hostname,
		Protocol: table.HTTPProtocolType, VirtualHosts: vhs}
}

func vhost(hostname string, rules ...*table.RouteRule) *table.VirtualHost {
	return &table.VirtualHost{Hostname: hostname, Rules: rules}
}

// rule makes the rule "httproute/default/<route>/rule/0/match/0" and names
// its backends after it.
func rule(route string, m *table.HTTPMatch, backends ...*table.Backend) *table.RouteRule {
	base := "httproute/default/" + route + "/rule/0"
	r := &table.RouteRule{Name: base + "/match/0", HTTP: m, Backends: backends,
		Route: table.ObjectKey{Kind: "HTTPRoute", Namespace: "default", Name: route}}
	for i, b := range backends {
		b.Name = base + "/backend/" + strconv.Itoa(i)
	}
	return r
}

func grpcRule(route string, m *table.GRPCMatch, backends ...*table.Backend) *table.RouteRule {
	base := "grpcroute/default/" + route + "/rule/0"
	r := &table.RouteRule{Name: base + "/match/0", GRPC: m, Backends: backends,
		Route: table.ObjectKey{Kind: "GRPCRoute", Namespace: "default", Name: route}}
	for i, b := range backends {
		b.Name = base + "/backend/" + strconv.Itoa(i)
		b.HTTP2 = true // as the engine marks GRPCRoute backends
	}
	return r
}

// pathMatch makes a table match as the engine compiles it: a PathPrefix
// value loses its trailing slashes.
func pathMatch(typ table.MatchType, value string) *table.HTTPMatch {
	if typ == table.MatchPathPrefix {
		value = strings.TrimRight(value, "/")
	}
	return &table.HTTPMatch{Path: table.PathMatch{Type: typ, Value: value}}
}

func prefix(p string) *table.HTTPMatch { return pathMatch(table.MatchPathPrefix, p) }
func exact(p string) *table.HTTPMatch  { return pathMatch(table.MatchExact, p) }
func regex(p string) *table.HTTPMatch  { return pathMatch(table.MatchRegularExpression, p) }

// valueMatch makes an Exact or RegularExpression table value match.
func valueMatch(name, value string, re bool) table.ValueMatch {
	t := table.MatchExact
	if re {
		t = table.MatchRegularExpression
	}
	return table.ValueMatch{Name: name, Type: t, Value: value}
}

// withHeader adds a header match (name canonical, as the engine makes it).
func withHeader(m *table.HTTPMatch, name, value string, re bool) *table.HTTPMatch {
	m.Headers = append(m.Headers, valueMatch(textproto.CanonicalMIMEHeaderKey(name), value, re))
	return m
}

func withQuery(m *table.HTTPMatch, name, value string, re bool) *table.HTTPMatch {
	m.QueryParams = append(m.QueryParams, valueMatch(name, value, re))
	return m
}

func withMethod(m *table.HTTPMatch, method string) *table.HTTPMatch {
	m.Method = method
	return m
}

func service(name string) table.ObjectKey {
	return table.ObjectKey{Kind: "Service", Namespace: "default", Name: name}
}

// echo is a backend served by the built-in echo backend of Service <svc>.
func echo(svc string, weight int32) *table.Backend {
	return &table.Backend{Service: service(svc), Port: 80, Weight: weight,
		Target: &table.Target{Kind: table.TargetEcho, Why: "echo for " + svc}}
}

// mapped is a backend mapped to real addresses.
func mapped(svc string, weight int32, addrs ...string) *table.Backend {
	return &table.Backend{Service: service(svc), Port: 80, Weight: weight,
		Target: &table.Target{Kind: table.TargetMapped, Addresses: addrs, Why: "mapped " + svc}}
}

func invalid(svc string, weight int32, why string) *table.Backend {
	return &table.Backend{Service: service(svc), Port: 80, Weight: weight, Invalid: why}
}

// freePort returns a TCP port free on ip, for a table's listener port
// (internal/freeport: outside the ephemeral range, so nothing else takes
// it before the Server binds it).
func freePort(t testing.TB, ip string) int32 {
	t.Helper()
	return int32(freeport.TCP(t, ip))
}

// heldPort returns a port on 127.0.0.1 that someone else listens on for
// the whole test, so that binding it fails, and an offset from it that
// lands on a free port.
func heldPort(t testing.TB) (port int32, offset int) {
	t.Helper()
	a, b := freePort(t, "127.0.0.1"), freePort(t, "127.0.0.1")
	lo, hi := min(a, b), max(a, b)
	held, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(int(lo)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { held.Close() })
	return lo, int(hi - lo)
}

// refusedPort returns a TCP port on 127.0.0.1 that refuses connections
// for the whole test: a backend that is down.
func refusedPort(t testing.TB) int32 {
	t.Helper()
	return int32(freeport.Refused(t, "127.0.0.1"))
}

// harness is a Server serving one table on loopback with a client.
type harness struct {
	t      testing.TB
	s      *Server
	ip     string
	port   int32
	tab    *table.Table
	client *http.Client
}

// serve starts a Server on 127.0.0.1 and a free port with the table build
// makes for that port.
func serve(t testing.TB, build func(port int32) *table.Table) *harness {
	t.Helper()
	h := &harness{t: t, s: New(Config{}), ip: "127.0.0.1", port: freePort(t, "127.0.0.1")}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.s.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	h.apply(build(h.port))
	h.client = &http.Client{
		Transport:     &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 16},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}
	t.Cleanup(h.client.CloseIdleConnections)
	return h
}

func (h *harness) apply(tab *table.Table) *ApplyReport {
	h.t.Helper()
	h.tab = tab
	rep := h.s.Apply(tab)
	if err := rep.Err(); err != nil {
		h.t.Fatalf("apply: %v", err)
	}
	return rep
}

func (h *harness) url(path string) string {
	return "http://" + net.JoinHostPort(h.ip, strconv.Itoa(int(h.port))) + path
}

// request builds a request for host and path; hdr holds "Name: value" pairs.
func (h *harness) request(method, host, path string, hdr ...string) *http.Request {
	h.t.Helper()
	req, err := http.NewRequest(method, h.url(path), nil)
	if err != nil {
		h.t.Fatal(err)
	}
	req.Host = host
	for _, kv := range hdr {
		k, v, _ := strings.Cut(kv, ":")
		req.Header.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return req
}

// result is a response read completely.
type result struct {
	status int
	header http.Header
	body   []byte
}

func (r result) echo(t testing.TB) echosrv.Response {
	t.Helper()
	var e echosrv.Response
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Fatalf("status %d, not echo JSON: %v: %s", r.status, err, r.body)
	}
	return e
}

func (h *harness) do(req *http.Request) result {
	h.t.Helper()
	resp, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatalf("reading body: %v", err)
	}
	return result{resp.StatusCode, resp.Header, body}
}

func (h *harness) get(host, path string, hdr ...string) result {
	h.t.Helper()
	return h.do(h.request(http.MethodGet, host, path, hdr...))
}

// explain asks Explain about the same request the data plane gets.
func (h *harness) explain(req *http.Request) *Trace {
	return Explain(h.tab, h.ip, h.port, req.Clone(context.Background()))
}

// waitTrace waits for the trace of a request whose path (as traced) is path.
func waitTrace(t testing.TB, s *Server, match func(Trace) bool) Trace {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		ts := s.Traces()
		for i := len(ts) - 1; i >= 0; i-- {
			if match(ts[i]) {
				return ts[i]
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("no matching trace among %d", len(s.Traces()))
	return Trace{}
}

var testIDs atomic.Int64

// traced sends req marked with a unique X-Test-Id and returns the response
// and the request's trace.
func (h *harness) traced(req *http.Request) (result, Trace) {
	h.t.Helper()
	id := strconv.FormatInt(testIDs.Add(1), 10)
	req.Header.Set("X-Test-Id", id)
	res := h.do(req)
	tr := waitTrace(h.t, h.s, func(t Trace) bool { return t.RequestHeaders.Get("X-Test-Id") == id })
	return res, tr
}
