package emulator

import (
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	echosrv "github.com/gwdev/gwdev/emulator/echo"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/internal/testkit"
)

// TestTLSWithCurlAndOpenSSL drives HTTPS and passthrough listeners with
// curl and openssl s_client, when they are installed.
func TestTLSWithCurlAndOpenSSL(t *testing.T) {
	ca, appCA := newTestCA(t, "gateway CA"), newTestCA(t, "app CA")
	caFile, appCAFile := filepath.Join(t.TempDir(), "ca.pem"), filepath.Join(t.TempDir(), "app-ca.pem")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(appCAFile, appCA.pem, 0o600); err != nil {
		t.Fatal(err)
	}
	certs := []*table.Certificate{ca.certificate("web", certOpts{dnsNames: []string{"app.example.com", "api.example.com"}})}
	h := serve(t, func(p int32) *table.Table {
		pass := echo("db", 1)
		pass.Target.EchoTLS = appCA.certificate("db-tls", certOpts{dnsNames: []string{"db.example.com"}})
		return newTable(gateway("gw", "127.0.0.1", port(p,
			httpsListener("app", "app.example.com", certs, vhost("", rule("app", prefix("/"), echo("app", 1)))),
			httpsListener("api", "api.example.com", certs, vhost("", rule("api", prefix("/"), echo("api", 1)))),
			tlsListenerTable("db", "db.example.com", table.TLSModePassthrough, nil, sniRouteTo("db", "db.example.com", pass)),
		)))
	})
	hostport := fmt.Sprintf("%d", h.port)
	t.Run("curl", func(t *testing.T) {
		curl, err := exec.LookPath("curl")
		if err != nil {
			t.Skip("curl is not installed")
		}
		run := func(args ...string) string {
			base := []string{"-sS", "--max-time", "5", "--noproxy", "*", "--cacert", caFile,
				"--resolve", "app.example.com:" + hostport + ":127.0.0.1", "-w", "\n%{http_code} %{http_version}"}
			out, err := exec.Command(curl, append(base, args...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("curl %v: %v: %s", args, err, out)
			}
			return string(out)
		}
		out := run("https://app.example.com:" + hostport + "/curl")
		i := strings.LastIndexByte(out, '\n')
		body, status := out[:i], out[i+1:]
		var e echosrv.Response
		if err := json.Unmarshal([]byte(body), &e); err != nil || status != "200 2" || e.Service != "app" {
			t.Errorf("curl h2: %v %q", err, out)
		}
		if out := run("--http1.1", "https://app.example.com:"+hostport+"/curl"); !strings.HasSuffix(out, "200 1.1") {
			t.Errorf("curl http/1.1: %q", out)
		}
		// The Host of another listener on this connection: 421.
		if out := run("-H", "Host: api.example.com", "https://app.example.com:"+hostport+"/"); !strings.HasSuffix(out, "421 2") ||
			!strings.Contains(out, "gwdev: Misdirected Request: the connection's SNI app.example.com") {
			t.Errorf("curl 421: %q", out)
		}
	})
	t.Run("openssl", func(t *testing.T) {
		openssl, err := exec.LookPath("openssl")
		if err != nil {
			t.Skip("openssl is not installed")
		}
		sclient := func(sni, caFile string, extra ...string) string {
			args := append([]string{"s_client", "-connect", h.addr(), "-servername", sni, "-CAfile", caFile}, extra...)
			cmd := exec.Command(openssl, args...)
			cmd.Stdin = strings.NewReader("")
			out, _ := cmd.CombinedOutput()
			return string(out)
		}
		out := sclient("app.example.com", caFile, "-alpn", "h2,http/1.1")
		if !strings.Contains(out, "ALPN protocol: h2") || !strings.Contains(out, "Verify return code: 0 (ok)") {
			t.Errorf("openssl HTTPS: %s", out)
		}
		// Passthrough: the handshake is the echo backend's, with its own
		// certificate.
		out = sclient("db.example.com", appCAFile)
		if !strings.Contains(out, "CN = db.example.com") || !strings.Contains(out, "Verify return code: 0 (ok)") {
			t.Errorf("openssl passthrough: %s", out)
		}
		// An SNI nobody serves: closed without a handshake.
		out = sclient("nobody.example.com", caFile)
		if !strings.Contains(out, "no peer certificate available") {
			t.Errorf("openssl unknown SNI: %s", out)
		}
	})
}

// TestHTTPSFromManifests goes through the loader and the engine: a Secret
// in YAML, an HTTPS listener, a TLSRoute on a passthrough listener of the
// same port, and the echo backend serving TLS from a Service annotation.
func TestHTTPSFromManifests(t *testing.T) {
	ca := newTestCA(t, "test CA")
	webCrt, webKey := ca.issue(certOpts{dnsNames: []string{"web.example.com"}})
	dbCrt, dbKey := ca.issue(certOpts{dnsNames: []string{"db.example.com"}})
	b64 := base64.StdEncoding.EncodeToString
	p := freePort(t, "127.0.0.1")
	yaml := fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  addresses: [{type: IPAddress, value: 127.0.0.1}]
  listeners:
  - name: web
    protocol: HTTPS
    port: %[1]d
    hostname: web.example.com
    tls: {mode: Terminate, certificateRefs: [{name: web-tls}]}
  - name: db
    protocol: TLS
    port: %[1]d
    hostname: db.example.com
    tls: {mode: Passthrough}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: gw, sectionName: web}]
  rules: [{backendRefs: [{name: web, port: 8080}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: TLSRoute
metadata: {name: db}
spec:
  parentRefs: [{name: gw, sectionName: db}]
  hostnames: [db.example.com]
  rules: [{backendRefs: [{name: db, port: 5432}]}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 8080}]}
---
apiVersion: v1
kind: Service
metadata:
  name: db
  annotations: {gwdev.dev/echo-tls-secret: db-tls}
spec: {ports: [{port: 5432}]}
---
apiVersion: v1
kind: Secret
metadata: {name: web-tls}
type: kubernetes.io/tls
data: {tls.crt: %[2]s, tls.key: %[3]s}
---
apiVersion: v1
kind: Secret
metadata: {name: db-tls}
type: kubernetes.io/tls
data: {tls.crt: %[4]s, tls.key: %[5]s}
`, p, b64(webCrt), b64(webKey), b64(dbCrt), b64(dbKey))
	res := testkit.Translate(t, "tls.yaml", []byte(yaml), engine.Options{})
	if errs := testkit.ErrorFindings(res); len(errs) > 0 {
		t.Errorf("error findings: %q", errs)
	}
	h := &harness{t: t, s: New(Config{}), ip: "127.0.0.1", port: p}
	t.Cleanup(func() { _ = h.s.Close(t.Context()) })
	h.apply(res.Table)
	roots := ca.pool()
	r, _, tr := h.httpsGet(h.httpsClient("web.example.com", &tls.Config{RootCAs: roots}, true), "web.example.com", "/")
	if r.status != 200 || r.echo(t).Service != "web" || tr.Listener != "gateway/default/gw/listener/web" || tr.Source == "" {
		t.Errorf("HTTPS: %d %s, trace %+v", r.status, r.body, tr)
	}
	conn, err := h.tlsDial("db.example.com", &tls.Config{RootCAs: roots})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	isTLS, a := echoStreamTest(t, conn)
	if isTLS != "true" || a.Service != "db" || a.TLS.ServerName != "db.example.com" {
		t.Errorf("passthrough: %s %+v", isTLS, a)
	}
}
