package tui

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/lipgloss"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// otherCA writes a CA certificate that signed nothing gwdev serves.
func otherCA(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "unrelated CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "other-ca.crt")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// httpsTrace sends GET /x with SNI and Host app.example.com to the HTTPS
// listener of samples/https and returns its trace, with the table served.
func httpsTrace(t *testing.T) (emulator.Trace, *table.Table) {
	t.Helper()
	s, bound := serveSample(t, "https")
	addr := bound["443/TCP"]
	n := len(s.Traces())
	conf := &tls.Config{ServerName: "app.example.com", InsecureSkipVerify: true} //nolint:gosec // what verifies is under test
	tr := &http.Transport{DisableKeepAlives: true, ForceAttemptHTTP2: true,
		DialTLSContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return dialTLS(ctx, addr, conf) }}
	req, _ := http.NewRequest(http.MethodGet, "https://app.example.com/x", nil)
	req.Header.Set("User-Agent", "probe/1.0")
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	orig := nextTrace(t, s, n)
	if orig.Certificate != "default/app-cert" {
		t.Fatalf("the trace names certificate %q, want default/app-cert", orig.Certificate)
	}
	res := engine.Translate(loadSample(t, "https").Snapshot, engine.Options{Now: metav1.NewTime(fixedNow)})
	return orig, res.Table
}

// runCommand runs a copied command line in a shell and returns its output.
func runCommand(t *testing.T, line string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "sh", "-c", line+" </dev/null").CombinedOutput()
	return string(out), err
}

// TestCopyHTTPSVerifiesWithKnownCA: a request to an HTTPS listener whose
// certificate chains to a CA file the dashboard knows is copied with
// --cacert (the files that do not exist or do not verify are skipped), and
// real curl run with the copied line verifies the server and gets 200;
// openssl s_client and grpcurl lines name the CA file too.
func TestCopyHTTPSVerifiesWithKnownCA(t *testing.T) {
	orig, tab := httpsTrace(t)
	ca, err := filepath.Abs("../samples/https/ca.crt") // the sample's self-signed certificate
	if err != nil {
		t.Fatal(err)
	}
	tc := trustChecker{caFiles: []string{filepath.Join(t.TempDir(), "missing.crt"), otherCA(t), ca}, now: time.Now}
	st := tc.trustFor(orig, tab)
	if st.caFile != ca || !strings.Contains(st.note, "Secret default/app-cert verifies for app.example.com against "+ca) {
		t.Fatalf("trust: %+v", st)
	}
	line, _, err := commandLineTrusting(orig, st)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(orig.Address)
	if !strings.HasPrefix(line, "curl -i --cacert "+ca+" --resolve app.example.com:"+port+":") || strings.Contains(line, " -k") {
		t.Errorf("command: %s", line)
	}
	if _, err := exec.LookPath("curl"); err == nil {
		out, err := runCommand(t, line)
		if err != nil || !strings.Contains(out, " 200") {
			t.Errorf("%s: %v\n%s", line, err, out)
		}
	}

	// The same connection seen as a TLS stream: openssl verifies the
	// certificate and the name, and stops if either fails.
	stream := orig
	stream.Proto, stream.Method, stream.ALPN = "TLS Terminate", "", []string{"http/1.1"}
	line, _, _ = commandLineTrusting(stream, st)
	want := "openssl s_client -connect " + orig.Address + " -servername app.example.com -CAfile " + ca +
		" -verify_hostname app.example.com -verify_return_error -alpn http/1.1"
	if line != want {
		t.Errorf("openssl command\n got  %s\n want %s", line, want)
	}
	if _, err := exec.LookPath("openssl"); err == nil {
		out, err := runCommand(t, line)
		if err != nil || !strings.Contains(out, "Verify return code: 0 (ok)") {
			t.Errorf("%s: %v\n%s", line, err, out)
		}
	}

	grpcs := orig
	grpcs.GRPC, grpcs.Path, grpcs.GRPCService, grpcs.GRPCMethod = true, "/svc.S/M", "svc.S", "M"
	line, _, _ = commandLineTrusting(grpcs, st)
	if !strings.HasPrefix(line, "grpcurl -cacert "+ca+" -servername app.example.com ") || strings.Contains(line, "-insecure") {
		t.Errorf("grpcurl command: %s", line)
	}
}

// TestCopyHTTPSWithoutKnownCA: -k stays where no CA file verifies the
// certificate, and the note says why; the system's roots verifying it need
// no flag at all.
func TestCopyHTTPSWithoutKnownCA(t *testing.T) {
	orig, tab := httpsTrace(t)
	other := otherCA(t)
	for _, c := range []struct {
		name  string
		tc    trustChecker
		flag  string
		notes []string
	}{
		{"no CA file exists", trustChecker{caFiles: []string{filepath.Join(t.TempDir(), "ca.crt")}},
			" -k ", []string{"none of the CA files gwdev knows exists", "Secret default/app-cert"}},
		{"another CA", trustChecker{caFiles: []string{other}},
			" -k ", []string{"the certificate of Secret default/app-cert does not verify against " + other, "unknown authority"}},
		{"system roots", trustChecker{caFiles: []string{other}, systemRoots: func() (*x509.CertPool, error) {
			b, err := os.ReadFile("../samples/https/ca.crt")
			p := x509.NewCertPool()
			p.AppendCertsFromPEM(b)
			return p, err
		}}, "curl -i --resolve ", []string{"verifies for app.example.com against the system's roots"}},
	} {
		c.tc.now = time.Now
		st := c.tc.trustFor(orig, tab)
		line, _, _ := commandLineTrusting(orig, st)
		if !strings.Contains(line, c.flag) || strings.Contains(line, "--cacert") {
			t.Errorf("%s: command %s", c.name, line)
		}
		for _, n := range c.notes {
			if !strings.Contains(st.note, n) {
				t.Errorf("%s: note %q lacks %q", c.name, st.note, n)
			}
		}
	}

	// A name the certificate does not cover fails verification by name.
	wrong := orig
	wrong.SNI = "nope.example.org"
	st := trustChecker{caFiles: []string{"../samples/https/ca.crt"}, now: time.Now}.trustFor(wrong, tab)
	if st.verifies() || !strings.Contains(st.note, "not nope.example.org") {
		t.Errorf("SNI outside the certificate: %+v", st)
	}
	// The Secret is no longer served: nothing to verify.
	gone := orig
	gone.Certificate = "default/old-cert"
	if st := (trustChecker{caFiles: []string{"../samples/https/ca.crt"}, now: time.Now}).trustFor(gone, tab); st.verifies() ||
		!strings.Contains(st.note, "no longer serves the certificate of Secret default/old-cert") {
		t.Errorf("certificate gone: %+v", st)
	}
}

// TestCopyKeyNamesCAFile: c in the Traces view copies the command with
// --cacert when Options.CAFiles holds the CA, and the status line says
// which file verifies which Secret's certificate; with only an unrelated
// CA it copies -k and says why.
func TestCopyKeyNamesCAFile(t *testing.T) {
	orig, _ := httpsTrace(t)
	ca, _ := filepath.Abs("../samples/https/ca.crt")
	other := otherCA(t)
	noRoots := func() (*x509.CertPool, error) { return x509.NewCertPool(), nil }
	for _, c := range []struct {
		caFiles      []string
		prefix, note string
	}{
		{[]string{ca}, "curl -i --cacert " + ca + " --resolve app.example.com:", "← copied; --cacert: the certificate of Secret default/app-cert verifies"},
		{[]string{other}, "curl -i -k --resolve app.example.com:", "← copied; -k: the certificate of Secret default/app-cert does not verify against " + other},
	} {
		var copied string
		m := newTestModel(250, 30, Options{CAFiles: c.caFiles, SystemRoots: noRoots,
			SystemClipboard: func(s string) error { copied = s; return nil }})
		run(m, sampleState(t, "https"))
		run(m, TracesMsg{Traces: []emulator.Trace{orig}})
		press(m, "4")
		_, cmd := m.Update(keyMsg("c"))
		if cmd == nil {
			t.Fatal("c returned no command")
		}
		run(m, cmd()) // synchronously: it reads the CA file
		if !strings.HasPrefix(copied, c.prefix) {
			t.Errorf("copied %q, want it to start with %q", copied, c.prefix)
		}
		if s := m.status.text; !strings.HasPrefix(s, copied+"   ") || !strings.Contains(s, c.note) {
			t.Errorf("status line is not the command, then %q:\n%s", c.note, s)
		}
	}
}

// TestCopyStatusLineShowsCommandFirst: at 120 columns, with only OSC 52
// to copy through and a CA file that verifies, the status line starts with
// the command; what was done and the CA note follow it and may be cut.
func TestCopyStatusLineShowsCommandFirst(t *testing.T) {
	orig, _ := httpsTrace(t)
	ca, _ := filepath.Abs("../samples/https/ca.crt")
	noRoots := func() (*x509.CertPool, error) { return x509.NewCertPool(), nil }
	var clip bytes.Buffer
	m := newTestModel(120, 30, Options{CAFiles: []string{ca}, SystemRoots: noRoots, Clipboard: &clip})
	run(m, sampleState(t, "https"))
	run(m, TracesMsg{Traces: []emulator.Trace{orig}})
	press(m, "4")
	_, cmd := m.Update(keyMsg("c"))
	if cmd == nil {
		t.Fatal("c returned no command")
	}
	run(m, cmd())
	var status string
	for _, l := range strings.Split(m.View(), "\n") {
		if strings.Contains(l, "--cacert") || strings.Contains(l, "OSC 52") {
			status = l
		}
	}
	if w := lipgloss.Width(status); w > 120 {
		t.Errorf("status line is %d columns wide", w)
	}
	if want := "curl -i --cacert " + ca; !strings.HasPrefix(strings.TrimSpace(status), want[:min(len(want), 110)]) {
		t.Errorf("status line does not start with the command %q:\n%q", want, status)
	}
	if strings.Contains(status, "sent to the clipboard") && strings.Index(status, "sent to the clipboard") < strings.Index(status, "curl -i") {
		t.Errorf("the note comes before the command: %q", status)
	}
}
