package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/testkit"
)

const certsManifests = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web}
spec:
  gatewayClassName: gwdev
  addresses: [{type: IPAddress, value: 127.0.0.1}]
  listeners:
  - name: app
    protocol: HTTPS
    port: %[1]d
    hostname: app.example.com
    tls: {certificateRefs: [{name: app-cert}]}
  - name: any
    protocol: HTTPS
    port: %[1]d
    tls: {certificateRefs: [{name: shared-cert}]}
  - name: wild
    protocol: HTTPS
    port: %[1]d
    hostname: "*.wild.example.com"
    tls: {certificateRefs: [{name: shared-cert}]}
  - name: db
    protocol: TLS
    port: %[1]d
    hostname: db.example.com
    tls: {mode: Passthrough}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: web}]
  hostnames: [a.example.com, b.example.com]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: only-wild}
spec:
  parentRefs: [{name: web, sectionName: wild}]
  hostnames: [x.wild.example.com, not-on-any.example.com]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc}
spec: {ports: [{port: 80}]}
`

// TestCertsWritesSecretsAndTrustCommand: gwdev certs creates a CA with a
// private key file only its owner reads, writes a Secret per missing
// certificateRef that the engine accepts and the emulator serves, prints
// the curl command that trusts the CA, and never prints a private key.
func TestCertsWritesSecretsAndTrustCommand(t *testing.T) {
	dir, caDir := t.TempDir(), filepath.Join(t.TempDir(), "gwdev", "ca")
	p := freePort(t)
	if err := os.WriteFile(filepath.Join(dir, "gateway.yaml"), fmt.Appendf(nil, certsManifests, p), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runGwdev(t, "", "certs", dir, "--ca-dir", caDir)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, errOut)
	}
	caCrt := filepath.Join(caDir, "ca.crt")
	for _, want := range []string{
		"created a local CA in " + caDir,
		"+ Secret default/app-cert for app.example.com (valid until ",
		"+ Secret default/shared-cert for *.wild.example.com, a.example.com, b.example.com (valid until ",
		"wrote 2 Secrets to " + filepath.Join(dir, "gwdev-certs.yaml"),
		fmt.Sprintf("curl --cacert %s --resolve app.example.com:%d:127.0.0.1 https://app.example.com:%d/", caCrt, p, p),
		fmt.Sprintf("curl --cacert %s --resolve a.example.com:%d:127.0.0.1 https://a.example.com:%d/", caCrt, p, p),
		"export SSL_CERT_FILE=" + caCrt,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if st, err := os.Stat(filepath.Join(caDir, "ca.key")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("ca.key: %v %v", st.Mode(), err)
	}
	if st, err := os.Stat(caDir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("CA directory: %v %v", st.Mode(), err)
	}
	written, err := os.ReadFile(filepath.Join(dir, "gwdev-certs.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	caKey, _ := os.ReadFile(filepath.Join(caDir, "ca.key"))
	assertNoKeys(t, out+errOut, written, caKey)

	// The Secrets make every listener programmed, and the emulator serves
	// them with certificates that chain to the CA.
	proj := testkit.Project(t)
	res := engine.Translate(proj.LoadDir(dir).Snapshot, engine.Options{})
	for _, f := range res.Findings {
		if f.Severity == engine.SeverityError {
			t.Errorf("finding after gwdev certs: %s %s %s", f.Object, f.Reason, f.Message)
		}
	}
	s := emulator.New(emulator.Config{})
	defer s.Close(context.Background())
	if err := s.Apply(res.Table).Err(); err != nil {
		t.Fatal(err)
	}
	pem, _ := os.ReadFile(caCrt)
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	for _, host := range []string{"app.example.com", "a.example.com", "x.wild.example.com"} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: host}, ForceAttemptHTTP2: true}
		c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
		req, _ := http.NewRequest("GET", fmt.Sprintf("https://127.0.0.1:%d/", p), nil)
		req.Host = host
		resp, err := c.Do(req)
		if err != nil {
			t.Errorf("%s: %v", host, err)
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		if (host == "a.example.com" && resp.StatusCode != 200) || resp.ProtoMajor != 2 {
			t.Errorf("%s: %s %s", host, resp.Status, resp.Proto)
		}
	}

	// A second run finds nothing missing and keeps the CA.
	out, _, code = runGwdev(t, "", "certs", dir, "--ca-dir", caDir)
	if code != 0 || !strings.Contains(out, "nothing to do") {
		t.Errorf("second run: %d %s", code, out)
	}
	if again, _ := os.ReadFile(filepath.Join(caDir, "ca.key")); string(again) != string(caKey) {
		t.Error("the CA was replaced")
	}
}

// TestCertsNeverTouchesUserFiles: an existing gwdev-certs.yaml that gwdev
// did not write is left alone; one it wrote gets new Secrets appended.
func TestCertsNeverTouchesUserFiles(t *testing.T) {
	dir, caDir := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gateway.yaml"), fmt.Appendf(nil, certsManifests, freePort(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	mine := "# my own file\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: mine}\n"
	path := filepath.Join(dir, "gwdev-certs.yaml")
	if err := os.WriteFile(path, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runGwdev(t, "", "certs", dir, "--ca-dir", caDir)
	if code == 0 || !strings.Contains(errOut, "was not written by gwdev certs") {
		t.Errorf("exit %d: %s %s", code, out, errOut)
	}
	if b, _ := os.ReadFile(path); string(b) != mine {
		t.Errorf("user file changed: %q", b)
	}
	// --out elsewhere works; a later run appends to gwdev's own file.
	other := filepath.Join(dir, "certs", "local.yaml")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := runGwdev(t, "", "certs", dir, "--ca-dir", caDir, "--out", other); code != 0 {
		t.Fatalf("--out: %s", errOut)
	}
	gw := strings.Replace(fmt.Sprintf(certsManifests, freePort(t)), "name: app-cert", "name: new-cert", 1)
	if err := os.WriteFile(filepath.Join(dir, "gateway.yaml"), []byte(gw), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = runGwdev(t, "", "certs", dir, "--ca-dir", caDir, "--out", other)
	if code != 0 || !strings.Contains(out, "+ Secret default/new-cert for app.example.com") || strings.Contains(out, "shared-cert") {
		t.Errorf("second run: %d %s %s", code, out, errOut)
	}
	b, _ := os.ReadFile(other)
	if n := strings.Count(string(b), "kind: Secret"); n != 3 || !strings.HasPrefix(string(b), app.CertsHeader) {
		t.Errorf("appended file has %d Secrets:\n%s", n, b)
	}
}

// assertNoKeys fails if out contains any private key: PEM blocks, the
// base64 of the written keys, or lines of their PEM.
func assertNoKeys(t *testing.T, out string, manifests, caKey []byte) {
	t.Helper()
	if strings.Contains(out, "PRIVATE KEY") {
		t.Fatal("output contains a PEM private key")
	}
	keys := []string{string(caKey)}
	for _, m := range regexp.MustCompile(`tls\.key: (\S+)`).FindAllStringSubmatch(string(manifests), -1) {
		keys = append(keys, m[1])
		if b, err := base64.StdEncoding.DecodeString(m[1]); err == nil {
			keys = append(keys, string(b))
		}
	}
	if len(keys) < 3 {
		t.Fatalf("found %d keys in the manifests", len(keys)-1)
	}
	for _, k := range keys {
		for _, line := range strings.Split(k, "\n") {
			if len(line) >= 16 && !strings.HasPrefix(line, "-----") && strings.Contains(out, line) {
				t.Fatalf("output contains private key material %q", line)
			}
		}
	}
}

// certsServedManifests: an HTTPS listener for *.example.com whose only
// route serves shop.example.com, and one for *.internal.test whose route
// serves *.svc.internal.test (two labels deeper than the listener's
// wildcard certificate reaches).
const certsServedManifests = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web}
spec:
  gatewayClassName: gwdev
  addresses: [{type: IPAddress, value: 127.0.0.1}]
  listeners:
  - name: shop
    protocol: HTTPS
    port: %[1]d
    hostname: "*.example.com"
    tls: {certificateRefs: [{name: shop-cert}]}
  - name: internal
    protocol: HTTPS
    port: %[2]d
    hostname: "*.internal.test"
    tls: {certificateRefs: [{name: internal-cert}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop}
spec:
  parentRefs: [{name: web, sectionName: shop}]
  hostnames: [shop.example.com]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: internal}
spec:
  parentRefs: [{name: web, sectionName: internal}]
  hostnames: ["*.svc.internal.test"]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc}
spec: {ports: [{port: 80}]}
`

// certsCurlLine is a curl line gwdev certs prints.
var certsCurlLine = regexp.MustCompile(`curl --cacert (\S+) --resolve ([^:\s]+):(\d+):(\S+) (https://\S+)`)

// TestCertsCurlLineReachesARoute: every curl line gwdev certs prints names
// a host a route attached to its listener serves (a concrete route
// hostname, or one derived from a route's wildcard, which the certificate
// then covers), and, sent as printed to a real gwdev up on free ports,
// gets 200 from that route's backend: before, the line named the
// listener's wildcard-derived www.example.com, which no route serves (404).
func TestCertsCurlLineReachesARoute(t *testing.T) {
	dir, caDir := t.TempDir(), filepath.Join(t.TempDir(), "ca")
	shop, internal := freePort(t), freePort(t)
	if err := os.WriteFile(filepath.Join(dir, "gateway.yaml"), fmt.Appendf(nil, certsServedManifests, shop, internal), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := runGwdev(t, "", "certs", dir, "--ca-dir", caDir)
	if code != 0 {
		t.Fatalf("certs: exit %d: %s%s", code, out, errOut)
	}
	lines := certsCurlLine.FindAllStringSubmatch(out, -1)
	hosts := map[string]bool{}
	for _, m := range lines {
		hosts[m[2]] = true
	}
	if len(lines) != 2 || !hosts["shop.example.com"] || !hosts["www.svc.internal.test"] || strings.Contains(out, "404 until") {
		t.Errorf("want curl lines for shop.example.com and www.svc.internal.test, both served:\n%s", out)
	}
	up := runUp(t, &upOptions{noTUI: true, debounce: 10 * time.Millisecond}, dir)
	_, curlErr := exec.LookPath("curl")
	for _, m := range lines {
		caPath, port, addr, url := m[1], m[3], m[4], m[5]
		pem, err := os.ReadFile(caPath)
		if err != nil {
			t.Fatal(err)
		}
		roots := x509.NewCertPool()
		roots.AppendCertsFromPEM(pem)
		// What curl --resolve does: connect to addr, send SNI and Host.
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots},
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, net.JoinHostPort(addr, port))
			}}
		client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
		// Poll until gwdev up listens (it starts with the test).
		got := ""
		for deadline := time.Now().Add(settle); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			resp, err := client.Get(url)
			if err != nil {
				got = err.Error()
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			got = resp.Status // the first answer: up applies the folder at once
			break
		}
		tr.CloseIdleConnections()
		if got != "200 OK" {
			t.Errorf("%s: got %s, want 200 OK from the route's backend; gwdev up said:\n%s", m[0], got, up.String())
			continue
		}
		if curlErr == nil { // the line itself, as printed
			cmd := exec.Command("bash", "-c", m[0]+" -sS -o /dev/null -w %{http_code}")
			got, err := cmd.CombinedOutput()
			if err != nil || string(got) != "200" {
				t.Errorf("%s: %v: %s", m[0], err, got)
			}
		}
	}
}
