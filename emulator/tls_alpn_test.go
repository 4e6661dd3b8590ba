package emulator

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine/table"
)

// TestHTTPSTracesRecordOfferedALPN: the trace of a request over terminated
// HTTPS lists the ALPN protocols the client's ClientHello offered, for
// HTTP/2 and for HTTP/1.1 (the fast path) alike, and /traces serves them as
// "alpn": Go's client offering h2,http/1.1 or http/1.1 only, and curl.
func TestHTTPSTracesRecordOfferedALPN(t *testing.T) {
	ca := newTestCA(t, "test CA")
	cert := []*table.Certificate{ca.certificate("app", certOpts{dnsNames: []string{"app.example.com"}})}
	h := serve(t, func(p int32) *table.Table {
		return newTable(gateway("gw", "127.0.0.1", port(p,
			httpsListener("https", "app.example.com", cert, vhost("", rule("app", prefix("/"), echo("app", 1)))))))
	})
	for _, c := range []struct {
		offer    []string
		h2       bool
		wantNego string
	}{
		{[]string{"h2", "http/1.1"}, true, "h2"},
		{[]string{"http/1.1"}, false, "http/1.1"}, // served by the HTTP/1.1 fast path
	} {
		conf := &tls.Config{RootCAs: ca.pool(), ServerName: "app.example.com", NextProtos: c.offer}
		tr := &http.Transport{Proxy: nil, TLSClientConfig: conf, Protocols: new(http.Protocols), ForceAttemptHTTP2: c.h2}
		tr.Protocols.SetHTTP1(true)
		tr.Protocols.SetHTTP2(c.h2)
		client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
		path := "/alpn-" + strings.Join(c.offer, "-")
		res, resp, trace := h.httpsGet(client, "app.example.com", path)
		tr.CloseIdleConnections()
		if res.status != 200 || resp.TLS.NegotiatedProtocol != c.wantNego {
			t.Fatalf("offer %v: %d, negotiated %q", c.offer, res.status, resp.TLS.NegotiatedProtocol)
		}
		if !slices.Equal(trace.ALPN, c.offer) || trace.NegotiatedProtocol != c.wantNego {
			t.Errorf("offer %v: trace ALPN %v, negotiated %q", c.offer, trace.ALPN, trace.NegotiatedProtocol)
		}
	}

	// curl, as the issue saw it: it offers h2 and http/1.1.
	if curl, err := exec.LookPath("curl"); err == nil {
		caFile := filepath.Join(t.TempDir(), "ca.crt")
		if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
			t.Fatal(err)
		}
		url := "https://app.example.com:" + strconv.Itoa(int(h.port)) + "/curl"
		out, err := exec.Command(curl, "-sS", "--cacert", caFile, "--resolve", "app.example.com:"+strconv.Itoa(int(h.port))+":127.0.0.1",
			"-o", "/dev/null", "-w", "%{http_version}", url).CombinedOutput()
		if err != nil {
			t.Fatalf("curl: %v: %s", err, out)
		}
		trace := waitTrace(t, h.s, func(t Trace) bool { return t.Path == "/curl" })
		if want := []string{"h2", "http/1.1"}; string(out) != "2" || !slices.Equal(trace.ALPN, want) {
			t.Errorf("curl (HTTP %s): trace ALPN %v, want %v", out, trace.ALPN, want)
		}
	} else {
		t.Log("curl is not installed: checked with Go's client only")
	}

	// The traces' JSON, which /traces, /traces/stream and the access log
	// serve, has the field.
	b, err := json.Marshal(h.s.Traces())
	if err != nil {
		t.Fatal(err)
	}
	var ts []map[string]any
	if err := json.Unmarshal(b, &ts); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tr := range ts {
		if p, _ := tr["path"].(string); strings.HasPrefix(p, "/alpn-") || p == "/curl" {
			n++
			if _, ok := tr["alpn"].([]any); !ok {
				t.Errorf("trace of %s has no alpn: %v", p, tr)
			}
		}
	}
	if n < 2 {
		t.Errorf("traces: %d HTTPS request traces", n)
	}
}
