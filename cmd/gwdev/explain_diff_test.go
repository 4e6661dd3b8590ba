package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	pb "sigs.k8s.io/gateway-api-conformance-images/echo-basic/grpcechoserver"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/freeport"
	"github.com/gwdev/gwdev/internal/project"
)

// probeDeadline bounds each probe of the differential test; diffStalls
// counts the probes that used all of it, and more than maxDiffStalls fail
// the test at once.
const (
	probeDeadline = 5 * time.Second
	maxDiffStalls = 10
)

var diffStalls atomic.Int32

// The differential test: every sample and every engine golden case with
// listeners is served by a real emulator on 127.0.0.x (its ports moved to
// free ones), real clients (net/http, crypto/tls, grpc-go, net.Dial) send a
// corpus of requests and connections to every bound port, and `gwdev
// explain`'s probe for the same URL and flags must name the same listener,
// route, rule, backend and status as the trace of what was served.

// goldenStride samples the engine golden corpus: every goldenStride-th case
// (by file name) runs; all samples always run. GWDEV_DIFF_ALL=1 runs every
// case (about three times as long).
const goldenStride = 3

func TestExplainDifferential(t *testing.T) {
	loader, err := project.NewLoader(nil)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var inputs []diffInput
	samples, _ := filepath.Glob("../../samples/*")
	for _, d := range samples {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			inputs = append(inputs, diffInput{name: "samples/" + filepath.Base(d), load: func() *engine.Snapshot { return loader.LoadDir(d).Snapshot }})
		}
	}
	goldens, _ := filepath.Glob("../../engine/testdata/*.in.yaml")
	stride := goldenStride
	if os.Getenv("GWDEV_DIFF_ALL") == "1" {
		stride = 1
	}
	for i, f := range goldens {
		if i%stride != 0 {
			continue
		}
		inputs = append(inputs, diffInput{name: filepath.Base(f), load: func() *engine.Snapshot {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			return loader.LoadBytes(filepath.Base(f), b).Snapshot
		}})
	}
	probes := 0
	skipped := map[diffSkip]int{}
	for _, in := range inputs {
		probes += runDifferential(t, in, skipped)
	}
	t.Logf("%d inputs (%d samples, every %d. of %d golden cases), %d probes in %s; compared up to the backend only: %v",
		len(inputs), len(samples), stride, len(goldens), probes, time.Since(start).Round(time.Millisecond), skipped)
	if probes < 200 {
		t.Errorf("only %d probes: the corpus lost its listeners", probes)
	}
	checkDiffSkips(t, probes, skipped) // explain_diff_skips_test.go
	if n := diffStalls.Load(); n > 0 {
		t.Logf("%d probes waited their whole %s (a slow machine, or a server that stops answering)", n, probeDeadline)
	}
}

type diffInput struct {
	name string
	load func() *engine.Snapshot
}

// runDifferential serves one input and compares every probe; it returns
// how many it sent.
func runDifferential(t *testing.T, in diffInput, skipped map[diffSkip]int) int {
	t.Helper()
	res := engine.Translate(in.load(), engine.Options{Now: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})
	tab := res.Table
	if tab == nil || len(tab.Gateways) == 0 {
		return 0
	}
	movePorts(t, tab)
	downBackends(t, tab)
	s := emulator.New(emulator.Config{UDPSessionTimeout: 100 * time.Millisecond, TraceBuffer: 10000})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	}()
	rep := s.Apply(tab)
	n := 0
	for i, pr := range rep.Ports {
		if pr.Bound == "" {
			continue
		}
		g, p := portAt(tab, i)
		for _, pb := range portProbes(g, p) {
			n++
			if skip := pb.check(t, in.name, s, tab, g.Address, pr.Bound); skip != "" {
				skipped[skip]++
			}
		}
	}
	return n
}

// movePorts gives every Gateway port a free port on its address, so that
// the test binds nothing fixed.
func movePorts(t *testing.T, tab *table.Table) {
	t.Helper()
	for _, g := range tab.Gateways {
		for _, p := range g.Ports {
			if p.Transport == "UDP" {
				p.Port = int32(freeUDPPort(t))
			} else {
				p.Port = int32(freePort(t))
			}
		}
	}
}

// downBackends points every backend that is not gwdev's own (a mapped
// address, an EndpointSlice's endpoints, an ExternalName) at a port where
// connections are refused, the same for both sides of the comparison: the
// corpus names fixed addresses (backend-resolution-order's EndpointSlice
// is 127.0.0.1:8080), which reached whatever listened there, such as a
// gwdev up on its default ports, or a host name in DNS.
func downBackends(t *testing.T, tab *table.Table) {
	t.Helper()
	down := net.JoinHostPort("127.0.0.1", strconv.Itoa(freeport.Refused(t, "127.0.0.1")))
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || seen[v.Pointer()] {
				return
			}
			seen[v.Pointer()] = true
			if tg, ok := v.Interface().(*table.Target); ok {
				switch tg.Kind {
				case table.TargetMapped, table.TargetEndpointSlice, table.TargetExternalName:
					for i := range tg.Addresses {
						tg.Addresses[i] = down
					}
				}
				return
			}
			walk(v.Elem())
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice, reflect.Array:
			for i := 0; i < v.Len(); i++ {
				walk(v.Index(i))
			}
		case reflect.Map:
			it := v.MapRange()
			for it.Next() {
				walk(it.Value())
			}
		}
	}
	walk(reflect.ValueOf(tab))
}

// portAt is the i-th port of the table in ApplyReport order.
func portAt(tab *table.Table, i int) (*table.GatewayTable, *table.PortTable) {
	for _, g := range tab.Gateways {
		if g == nil {
			continue
		}
		for _, p := range g.Ports {
			if p == nil {
				continue
			}
			if i == 0 {
				return g, p
			}
			i--
		}
	}
	return nil, nil
}

// diffProbe is one request or connection: the explain URL and flags, and
// how a real client sends it.
type diffProbe struct {
	kind string // http, h2c, https, https1 (ALPN http/1.1), grpc, grpcs, tls, tcp, udp, plain-on-tls, tls-on-http
	host string
	path string // HTTP path, or /service/method for gRPC
	// sni is the ClientHello's server name for TLS kinds (noSNI: none).
	sni   string
	noSNI bool
}

// explainURL is the `gwdev explain` URL of the probe on port.
func (d diffProbe) explainURL(port int32) (string, *app.ProbeFlags) {
	o := &app.ProbeFlags{Method: "GET"}
	hp := net.JoinHostPort(d.host, strconv.Itoa(int(port)))
	switch d.kind {
	case "http":
		return "http://" + hp + d.path, o
	case "plain-on-tls":
		return "http://" + hp + d.path, o
	case "h2c":
		o.HTTP2 = true
		return "http://" + hp + d.path, o
	case "https", "tls-on-http":
		o.SNI, o.SNISet = d.sni, true
		return "https://" + hp + d.path, o
	case "https1":
		o.SNI, o.HTTP1, o.SNISet = d.sni, true, true
		return "https://" + hp + d.path, o
	case "grpc":
		return "grpc://" + hp + d.path, o
	case "grpcs":
		o.SNI, o.SNISet = d.sni, true
		return "grpcs://" + hp + d.path, o
	case "tls":
		o.SNI, o.SNISet = d.sni, true
		return "tls://" + hp, o
	}
	return d.kind + "://" + hp, o
}

// portProbes is the corpus for one port: every host its listeners and
// routes name plus one nobody serves, and the protocols the port speaks
// (and one it does not).
func portProbes(g *table.GatewayTable, p *table.PortTable) []diffProbe {
	if p.Transport == "UDP" {
		return []diffProbe{{kind: "udp", host: "udp.gwdev.test"}}
	}
	var proto table.ProtocolType
	for _, l := range p.Listeners {
		if l != nil {
			proto = l.Protocol
			break
		}
	}
	const nobody = "nobody.gwdev.invalid"
	hosts := portHosts(p)
	var out []diffProbe
	switch proto {
	case table.TCPProtocolType:
		return []diffProbe{{kind: "tcp", host: "tcp.gwdev.test"}, {kind: "http", host: "tcp.gwdev.test", path: "/"}}
	case table.HTTPProtocolType:
		for _, h := range append(hosts, nobody) {
			for _, path := range hostPaths(p, h) {
				out = append(out, diffProbe{kind: "http", host: h, path: path})
			}
			out = append(out, diffProbe{kind: "h2c", host: h, path: "/"})
			for _, m := range hostGRPC(p, h) {
				out = append(out, diffProbe{kind: "grpc", host: h, path: m})
			}
		}
		out = append(out, diffProbe{kind: "tls-on-http", host: hosts0(hosts, nobody), path: "/", sni: hosts0(hosts, nobody)})
	case table.HTTPSProtocolType, table.TLSProtocolType:
		for _, h := range append(hosts, nobody) {
			if l := sniListener(p, h); l != nil && l.Protocol == table.TLSProtocolType {
				out = append(out, diffProbe{kind: "tls", host: h, sni: h})
				continue
			}
			for _, path := range hostPaths(p, h) {
				out = append(out, diffProbe{kind: "https", host: h, path: path, sni: h})
			}
			for _, m := range hostGRPC(p, h) {
				out = append(out, diffProbe{kind: "grpcs", host: h, path: m, sni: h})
			}
		}
		h := hosts0(hosts, nobody)
		out = append(out, diffProbe{kind: "https", host: h, path: "/", noSNI: true},
			diffProbe{kind: "https1", host: h, path: "/", sni: h},
			diffProbe{kind: "https", host: h, path: "/", sni: "wrong.gwdev.invalid"},
			diffProbe{kind: "plain-on-tls", host: h, path: "/"})
	}
	return out
}

// sniListener is the listener of the port an SNI selects (nil: none).
func sniListener(p *table.PortTable, sni string) *table.ListenerTable {
	var ls []*table.ListenerTable
	var names []string
	for _, l := range p.Listeners {
		if l != nil {
			ls, names = append(ls, l), append(names, l.Hostname)
		}
	}
	idx := table.NewHostIndex(names)
	if i := idx.Lookup(sni); i >= 0 {
		return ls[i]
	}
	return nil
}

func hosts0(hosts []string, def string) string {
	if len(hosts) > 0 {
		return hosts[0]
	}
	return def
}

// portHosts lists a host for every listener and virtual host hostname of
// the port ("*.x" becomes "w.x"), at most 4.
func portHosts(p *table.PortTable) []string {
	var hosts []string
	add := func(h string) {
		if h == "" {
			return
		}
		if strings.HasPrefix(h, "*.") {
			h = "w" + h[1:]
		}
		if !slices.Contains(hosts, h) && len(hosts) < 4 {
			hosts = append(hosts, h)
		}
	}
	for _, l := range p.Listeners {
		if l == nil {
			continue
		}
		for _, vh := range l.VirtualHosts {
			if vh != nil {
				add(vh.Hostname)
			}
		}
		for _, r := range l.TLSRoutes {
			if r != nil && len(r.Hostnames) > 0 {
				add(r.Hostnames[0])
			}
		}
		add(l.Hostname)
	}
	return hosts
}

// hostPaths is "/" and up to two more paths the port's rules for host
// match by Exact or PathPrefix.
func hostPaths(p *table.PortTable, host string) []string {
	paths := []string{"/"}
	eachRule(p, host, func(r *table.RouteRule) {
		m := r.HTTP
		if m == nil || m.Path.Type == table.MatchRegularExpression || len(paths) >= 3 {
			return
		}
		v := m.Path.Value
		if v == "" {
			v = "/"
		}
		if !slices.Contains(paths, v) {
			paths = append(paths, v)
		}
	})
	return paths
}

// hostGRPC is up to two "/service/method" paths the port's gRPC rules for
// host match exactly, and one no rule names.
func hostGRPC(p *table.PortTable, host string) []string {
	var out []string
	eachRule(p, host, func(r *table.RouteRule) {
		g := r.GRPC
		if g == nil || len(out) >= 2 {
			return
		}
		svc, method := "gwdev.test.Any", "Any"
		if g.Type == table.MatchRegularExpression {
			return
		}
		if g.Service != "" {
			svc = g.Service
		}
		if g.Method != "" {
			method = g.Method
		}
		if len(g.Headers) == 0 && !slices.Contains(out, "/"+svc+"/"+method) {
			out = append(out, "/"+svc+"/"+method)
		}
	})
	if len(out) > 0 {
		out = append(out, "/gwdev.test.Nobody/Nothing")
	}
	return out
}

func eachRule(p *table.PortTable, host string, f func(*table.RouteRule)) {
	for _, l := range p.Listeners {
		if l == nil || !table.HostnameMatches(l.Hostname, host) {
			continue
		}
		for _, vh := range l.VirtualHosts {
			if vh == nil || !table.HostnameMatches(vh.Hostname, host) {
				continue
			}
			for _, r := range vh.Rules {
				if r != nil {
					f(r)
				}
			}
		}
	}
}

// check sends the probe to bound with a real client, finds its trace,
// asks explain, and compares; it returns why the comparison stopped at the
// backend ("" : it did not).
func (d diffProbe) check(t *testing.T, input string, s *emulator.Server, tab *table.Table, addr, bound string) diffSkip {
	t.Helper()
	_, portStr, _ := net.SplitHostPort(bound)
	port, _ := strconv.Atoi(portStr)
	rawURL, o := d.explainURL(int32(port))
	if d.noSNI {
		o.SNI, o.SNISet = "", true
	}
	sniSet := o.SNISet
	label := fmt.Sprintf("%s: %s %s", input, d.kind, rawURL)
	if d.noSNI {
		label += " (no SNI)"
	} else if sniSet {
		label += " (SNI " + o.SNI + ")"
	}
	probe, err := o.Probe(rawURL)
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	probe.Address = addr
	ex := emulator.ExplainProbe(tab, probe)
	sent := time.Now()
	local := d.send(t, bound, o.SNI, sniSet)
	if local == "" {
		t.Errorf("%s: the client could not connect", label)
		return ""
	}
	real, ok := traceOf(s, local, sent)
	if !ok {
		t.Errorf("%s: no trace of the real connection from %s; explain said %s", label, local, summary(*ex))
		return ""
	}
	diffs, skip := compareTraces(real, *ex)
	if len(diffs) > 0 {
		t.Errorf("%s: explain and the data plane disagree:\n  %s\n  served:  %s\n  explain: %s", label, strings.Join(diffs, "\n  "), summary(real), summary(*ex))
	}
	if why := skipSaid(skip, tab, ex); why != "" {
		t.Errorf("%s: compared up to the backend only (%s), but explain does not say so: %s\n  served:  %s\n  explain: %s", label, skip, why, summary(real), summary(*ex))
	}
	return skip
}

// traceOf waits for the trace of the connection from local that started
// at sent or later: an earlier probe may have used the same local port
// (the kernel reuses it once that connection is gone), and its trace is
// in the history too.
func traceOf(s *emulator.Server, local string, sent time.Time) (emulator.Trace, bool) {
	deadline := time.Now().Add(settle)
	for time.Now().Before(deadline) {
		ts := s.Traces()
		for i := len(ts) - 1; i >= 0; i-- {
			if ts[i].Client == local && !ts[i].Time.Before(sent) {
				return ts[i], true
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return emulator.Trace{}, false
}

func summary(t emulator.Trace) string {
	return fmt.Sprintf("listener=%q vhost=%q rule=%q backend=%q status=%d grpc=%q end=%q upstream=%q reason=%q",
		t.Listener, t.VirtualHost, t.Rule, t.Backend, t.Status, t.GRPCStatus, t.End, t.Upstream, t.Reason)
}

// compareTraces lists where explain's trace disagrees with the served one,
// and why it stopped before the end ("" : it compared everything): the only
// reasons are the diffSkips, where what the data plane did depends on
// something explain does not do.
func compareTraces(real, ex emulator.Trace) ([]string, diffSkip) {
	var diffs []string
	eq := func(name, a, b string) {
		if a != b {
			diffs = append(diffs, fmt.Sprintf("%s: served %q, explain %q", name, a, b))
		}
	}
	eq("gateway", real.Gateway, ex.Gateway)
	eq("listener", real.Listener, ex.Listener)
	if strings.HasPrefix(ex.Reason, "only if the listener's pre-routing ExternalAuth check allows it") {
		return diffs, skipExternalAuth // explain does not ask the auth server, which runs before routing
	}
	eq("virtual host", real.VirtualHost, ex.VirtualHost)
	eq("route", real.Route, ex.Route)
	eq("rule", real.Rule, ex.Rule)
	eq("sni", real.SNI, ex.SNI)
	eq("proto", real.Proto, ex.Proto)
	if real.Proto != "TLS Passthrough" { // the backend's ServerHello decides those
		eq("tls version", real.TLSVersion, ex.TLSVersion)
		eq("negotiated protocol", real.NegotiatedProtocol, ex.NegotiatedProtocol)
	}
	eq("certificate", real.Certificate, ex.Certificate)
	eq("hint", real.Hint, ex.Hint)
	eq("client cert", real.ClientCert, ex.ClientCert)
	if ex.Status != 0 {
		eq("grpc status", real.GRPCStatus, ex.GRPCStatus) // else the backend's
	}
	if strings.HasPrefix(ex.Reason, "only if the ExternalAuth check allows it") {
		return diffs, skipExternalAuth // explain does not ask the auth server
	}
	if len(ex.Candidates) <= 1 {
		eq("backend", real.Backend, ex.Backend)
	} else if real.Backend != "" && !slices.ContainsFunc(ex.Candidates, func(c string) bool { return strings.HasPrefix(c, real.Backend+" → ") }) {
		diffs = append(diffs, fmt.Sprintf("backend: served %q, not among explain's candidates %v", real.Backend, ex.Candidates))
	}
	if real.Backend != ex.Backend {
		return diffs, skipWeightedPick // a different weighted pick: what follows depends on the backend
	}
	if ex.End == "" && real.End == "refused" && real.Upstream != "" {
		return diffs, skipBackendFailed // the gateway tried the backend explain names, and the backend failed
	}
	if (ex.End == "refused") != (real.End == "refused") {
		diffs = append(diffs, fmt.Sprintf("refused: served %q, explain %q", real.End, ex.End))
	}
	switch {
	case ex.Status != 0 || ex.End == "refused":
		if real.Status != ex.Status {
			diffs = append(diffs, fmt.Sprintf("status: served %d, explain %d", real.Status, ex.Status))
		}
		eq("reason", real.Reason, ex.Reason)
	case ex.Method != "" && real.Upstream == "":
		diffs = append(diffs, fmt.Sprintf("explain says the backend answers; served %d by the gateway (%s)", real.Status, real.Reason))
	case ex.Method != "" && real.Status >= 500 && real.Reason != "":
		return diffs, skipBackendFailed // the gateway reached for the backend (or its TLS) and it failed
	}
	return diffs, ""
}

// send makes the real connection or request and returns the client's
// local address, which the trace names ("" : it could not connect).
func (d diffProbe) send(t *testing.T, bound, sni string, sniSet bool) string {
	t.Helper()
	if !sniSet {
		sni = d.host
	}
	if d.noSNI {
		sni = ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), probeDeadline)
	defer cancel()
	defer func() {
		// A probe that waits its whole deadline is a server that stops
		// answering (the fast path once read a garbage request line up
		// to the header timeout: 561 s of probes). A loaded machine may
		// make a few slow; many end the test early instead of after
		// ten minutes.
		if ctx.Err() == context.DeadlineExceeded {
			if n := diffStalls.Add(1); n > maxDiffStalls {
				t.Fatalf("%d probes waited their whole %s: the server stops answering (last: %s %s%s)", n, probeDeadline, d.kind, d.host, d.path)
			}
		}
	}()
	var local string
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, bound)
		if err == nil {
			local = c.LocalAddr().String()
		}
		return c, err
	}
	tlsConf := &tls.Config{ServerName: sni, InsecureSkipVerify: true} //nolint:gosec // test certificates
	switch d.kind {
	case "http", "plain-on-tls", "h2c":
		tr := &http.Transport{DialContext: dial, DisableKeepAlives: true}
		if d.kind == "h2c" {
			tr.Protocols = new(http.Protocols)
			tr.Protocols.SetUnencryptedHTTP2(true)
		}
		sendHTTP(ctx, tr, "http://"+d.host+d.path, d.host)
	case "https", "https1", "tls-on-http":
		alpn := []string{"h2", "http/1.1"}
		if d.kind == "https1" {
			alpn = []string{"http/1.1"}
		}
		tr := &http.Transport{DisableKeepAlives: true, ForceAttemptHTTP2: d.kind != "https1",
			DialTLSContext: func(ctx context.Context, network, a string) (net.Conn, error) {
				c, err := dial(ctx, network, a)
				if err != nil {
					return nil, err
				}
				conf := tlsConf.Clone()
				conf.NextProtos = alpn
				tc := tls.Client(c, conf)
				if err := tc.HandshakeContext(ctx); err != nil {
					_ = c.Close()
					return nil, err
				}
				return tc, nil
			}}
		sendHTTP(ctx, tr, "https://"+d.host+d.path, d.host)
	case "grpc", "grpcs":
		creds := insecure.NewCredentials()
		if d.kind == "grpcs" {
			creds = credentials.NewTLS(tlsConf)
		}
		conn, err := grpc.NewClient("passthrough:///"+bound, grpc.WithTransportCredentials(creds), grpc.WithAuthority(d.host),
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return dial(ctx, "tcp", bound) }))
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.Invoke(ctx, d.path, &pb.EchoRequest{}, &pb.EchoResponse{})
		_ = conn.Close()
	case "tls":
		c, err := dial(ctx, "tcp", bound)
		if err != nil {
			return ""
		}
		tc := tls.Client(c, tlsConf)
		_ = tc.SetDeadline(time.Now().Add(2 * time.Second))
		if tc.HandshakeContext(ctx) == nil {
			_, _ = tc.Write([]byte("ping\n"))
			var b [16]byte
			_, _ = tc.Read(b[:])
		}
		_ = c.Close()
	case "tcp":
		c, err := dial(ctx, "tcp", bound)
		if err != nil {
			return ""
		}
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		_, _ = c.Write([]byte("ping\n"))
		var b [16]byte
		_, _ = c.Read(b[:])
		_ = c.Close()
	case "udp":
		c, err := net.Dial("udp", bound)
		if err != nil {
			return ""
		}
		local = c.LocalAddr().String()
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		_, _ = c.Write([]byte("ping"))
		var b [64]byte
		_, _ = c.Read(b[:])
		_ = c.Close()
	}
	return local
}

// sendHTTP sends a GET with the Host and reads the answer, if any.
func sendHTTP(ctx context.Context, tr *http.Transport, u, host string) {
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return
	}
	req.Host = host
	c := &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err == nil {
		_ = resp.Body.Close()
	}
}
