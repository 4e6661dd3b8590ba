package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/emulator"
)

// TestCopiedOnlyWhenTheClipboardTookIt: "copied" is said only when the
// system clipboard accepted the command.
func TestCopiedOnlyWhenTheClipboardTookIt(t *testing.T) {
	var took string
	for _, c := range []struct {
		system func(string) error
		want   string
	}{
		{func(s string) error { took = s; return nil }, "← copied; 1 redacted or cut header left out"},
		{func(string) error { return errors.New("no clipboard utilities") }, "← 1 redacted or cut header left out"},
	} {
		m := newTestModel(250, 40, Options{SystemClipboard: c.system})
		run(m, TracesMsg{Traces: sampleTraces(3)})
		press(m, "4", "down", "enter", "c")
		if v := m.View(); !strings.Contains(v, "curl -i http://127.0.0.1:8080/posts/1") || !strings.Contains(v, c.want) {
			t.Errorf("status line lacks the command or %q:\n%s", c.want, v)
		}
	}
	if !strings.HasPrefix(took, "curl -i http://127.0.0.1:8080/posts/1") {
		t.Errorf("system clipboard got %q", took)
	}
}

// TestRequestViewShowsTLSAndEnd: the request view has the TLS facts the
// trace has (SNI, ALPN, version), how a connection ended and the hint; no
// "(host )" or "answered 0" for a connection that carried no request.
func TestRequestViewShowsTLSAndEnd(t *testing.T) {
	st := newStyles(plainRenderer(), true)
	refused := emulator.Trace{Time: time.Unix(0, 0), Address: "127.0.0.1:8443", Gateway: "gateway/default/web", Port: 443,
		Proto: "TLS", Listener: "", SNI: "localhost", ALPN: []string{"h2", "http/1.1"}, End: "refused",
		Reason: `refused: no listener of port 443 matches SNI "localhost"`,
		Hint:   "try: curl -k --resolve app.example.com:8443:127.0.0.1 https://app.example.com:8443/"}
	out := strings.Join(traceDetail(st, refused, 120), "\n")
	for _, want := range []string{"tls       SNI localhost · ALPN h2,http/1.1", "ended     refused",
		"instead   try: curl -k --resolve app.example.com:8443:127.0.0.1 https://app.example.com:8443/"} {
		if !strings.Contains(out, want) {
			t.Errorf("request view lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"answered  0", "(host )"} {
		if strings.Contains(out, bad) {
			t.Errorf("request view shows %q:\n%s", bad, out)
		}
	}
	ok := emulator.Trace{Time: time.Unix(0, 0), Method: "GET", Host: "app.example.com", Path: "/", Status: 200,
		Listener: "gateway/default/web/listener/https", SNI: "app.example.com", NegotiatedProtocol: "h2", TLSVersion: "TLS 1.3",
		Rule: "httproute/default/app/rule/0/match/0"}
	out = strings.Join(traceDetail(st, ok, 120), "\n")
	if !strings.Contains(out, "tls       SNI app.example.com · ALPN (none offered) → h2 · TLS 1.3") || !strings.Contains(out, "(host app.example.com)") {
		t.Errorf("request view of an HTTPS request:\n%s", out)
	}
	tcp := emulator.Trace{Time: time.Unix(0, 0), Proto: "TCP", Listener: "gateway/default/web/listener/tcp",
		Rule: "tcproute/default/db/rule/0", End: "client closed"}
	out = strings.Join(traceDetail(st, tcp, 120), "\n")
	if strings.Contains(out, "answered") || strings.Contains(out, "(host ") || !strings.Contains(out, "ended     client closed") {
		t.Errorf("request view of a TCP connection:\n%s", out)
	}
}

// TestTraceListGRPCAndIdle: a gRPC failure shows its gRPC code, not the
// HTTP 200 it travelled in; a connection closed without sending anything
// is not a ✗ row.
func TestTraceListGRPCAndIdle(t *testing.T) {
	g := emulator.Trace{Status: 200, GRPC: true, GRPCStatus: "Unimplemented"}
	if got := statusCell(g); got != "g12" {
		t.Errorf("gRPC Unimplemented: ST %q, want g12", got)
	}
	if got := statusCell(emulator.Trace{Status: 200, GRPC: true, GRPCStatus: "OK"}); got != "200" {
		t.Errorf("gRPC OK: ST %q", got)
	}
	idle := emulator.Trace{Reason: "the client closed the connection without sending anything"}
	if got := ruleCell(idle); strings.HasPrefix(got, "✗") {
		t.Errorf("idle close is a failure row: %q", got)
	}
	garbage := emulator.Trace{Reason: "not an HTTP request (3 bytes received)", BytesIn: 3}
	if got := ruleCell(garbage); !strings.HasPrefix(got, "✗") {
		t.Errorf("garbage is not a failure row: %q", got)
	}
}

// TestHelpListsPageDownOnce: every view's full help names each key once.
func TestHelpListsPageDownOnce(t *testing.T) {
	m := newTestModel(120, 60, Options{})
	for _, view := range []string{"1", "2", "3", "4", "5", "6"} {
		press(m, view, "?")
		v := m.View()
		if n := strings.Count(v, "pgdn"); n != 1 {
			t.Errorf("view %s: help names pgdn %d times:\n%s", view, n, v)
		}
		press(m, "?")
	}
}

// TestOverviewShowsAdminProblem: the Overview says that the admin API is
// not where it was asked to be, and the status line says it at once.
func TestOverviewShowsAdminProblem(t *testing.T) {
	note := "admin API: 127.0.0.1:9901 is in use (another gwdev?); this one serves it on http://127.0.0.1:41234/"
	m := newTestModel(200, 40, Options{Admin: note, AdminProblem: true})
	run(m, NoticeMsg{Text: note, Problem: true})
	if v := m.View(); !strings.Contains(v, note) {
		t.Errorf("status line lacks the notice:\n%s", v)
	}
	run(m, sampleState(t, "basic"))
	if v := m.View(); !strings.Contains(v, "! "+note) {
		t.Errorf("overview lacks the notice:\n%s", v)
	}
}

// TestListenerSetConflictHintIsTrue: the hint for a ListenerSet listener
// that conflicts with the Gateway's own does not claim that neither is
// served (the Gateway's listener is).
func TestListenerSetConflictHintIsTrue(t *testing.T) {
	m := newTestModel(120, 60, Options{})
	run(m, sampleState(t, "listenerset"))
	press(m, "3")
	v := m.View()
	if !strings.Contains(v, "HostnameConflict") {
		t.Fatalf("Problems view lacks the conflict:\n%s", v)
	}
	if strings.Contains(v, "neither") {
		t.Errorf("the hint says neither listener is served, but the Gateway's is:\n%s", v)
	}
}

// TestStreamTracesShowTheirSNI: TLS and TCP streams (no HTTP request) show
// their protocol and the SNI as the row's method and host and as the
// request view's headline, and the view lists no HTTP header sections.
func TestStreamTracesShowTheirSNI(t *testing.T) {
	st := newStyles(plainRenderer(), true)
	pass := emulator.Trace{Time: time.Unix(0, 0), Address: "127.0.0.1:9443", Proto: "TLS Passthrough", SNI: "db.example.com",
		ALPN: []string{"postgresql"}, Listener: "gateway/default/web/listener/db", Rule: "tlsroute/default/db/rule/0", End: "client closed"}
	tcp := emulator.Trace{Time: time.Unix(0, 0), Address: "127.0.0.1:9100", Proto: "TCP", Listener: "gateway/default/web/listener/tcp",
		Rule: "tcproute/default/db/rule/0", End: "client closed"}
	for _, c := range []struct {
		tr           emulator.Trace
		method, host string
		headline     string
	}{
		{pass, "TLS", "db.example.com", "TLS db.example.com  → "},
		{tcp, "TCP", "", "TCP 127.0.0.1:9100  → "},
	} {
		if m, h := methodCell(c.tr), hostCell(c.tr); m != c.method || h != c.host {
			t.Errorf("%s: row method %q host %q, want %q %q", c.tr.Proto, m, h, c.method, c.host)
		}
		out := strings.Join(traceDetail(st, c.tr, 120), "\n")
		if !strings.HasPrefix(out, c.headline) || strings.Contains(out, "headers") {
			t.Errorf("%s: request view:\n%s", c.tr.Proto, out)
		}
	}
	// An HTTP request keeps its method, Host and header sections.
	req := emulator.Trace{Method: "GET", Host: "app.example.com", Path: "/", SNI: "app.example.com", Proto: "HTTP/2.0"}
	if methodCell(req) != "GET" || hostCell(req) != "app.example.com" ||
		!strings.Contains(strings.Join(traceDetail(st, req, 120), "\n"), "Request headers") {
		t.Error("an HTTP request's row or view changed")
	}
	// In the list, at 160 columns, the TLS row shows the SNI.
	m := newTestModel(160, 20, Options{})
	run(m, TracesMsg{Traces: []emulator.Trace{pass}})
	press(m, "4")
	if v := m.View(); !strings.Contains(v, "db.example.com") || !strings.Contains(v, "TLS") {
		t.Errorf("trace list:\n%s", v)
	}
}
