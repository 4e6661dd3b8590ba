package main

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// clusterObjects are a GatewayClass of another controller, a Gateway with
// an HTTP and an HTTPS listener (its certificate in a Secret), a route to
// an existing Service and a route to a missing one.
func clusterObjects(httpPort, httpsPort int, tlsCrt, tlsKey []byte) string {
	return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: cluster-gw}
spec: {controllerName: example.com/gateway-controller}
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web, namespace: default}
spec:
  gatewayClassName: cluster-gw
  addresses: [{type: IPAddress, value: 127.0.0.1}]
  listeners:
    - {name: http, protocol: HTTP, port: %d}
    - name: https
      protocol: HTTPS
      port: %d
      hostname: shop.example.com
      tls: {mode: Terminate, certificateRefs: [{name: web-tls}]}
---
apiVersion: v1
kind: Secret
metadata: {name: web-tls, namespace: default}
type: kubernetes.io/tls
data: {tls.crt: %s, tls.key: %s}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: default}
spec:
  parentRefs: [{name: web}]
  hostnames: [shop.example.com]
  rules: [{backendRefs: [{name: shop, port: 80}]}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: orphan, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [orphan.example.com]
  rules: [{backendRefs: [{name: nope, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: shop, namespace: default}
spec: {ports: [{port: 80}]}`, httpPort, httpsPort, b64(tlsCrt), b64(tlsKey))
}

// Status as the controller example.com/gateway-controller writes it (the
// Gateway's Programmed with a reason of its own, which gwdev does not
// compare).
const (
	classStatus = `conditions:
  - {type: Accepted, status: "True", reason: Accepted, message: ok, observedGeneration: 1, lastTransitionTime: "2026-01-01T00:00:00Z"}`
	gatewayStatus = `conditions:
  - {type: Accepted, status: "True", reason: Accepted, message: ok, observedGeneration: 1, lastTransitionTime: "2026-01-01T00:00:00Z"}
  - {type: Programmed, status: "True", reason: ProxyReady, message: ok, observedGeneration: 1, lastTransitionTime: "2026-01-01T00:00:00Z"}
listeners:
  - name: http
    attachedRoutes: 2
    supportedKinds: [{group: gateway.networking.k8s.io, kind: HTTPRoute}, {group: gateway.networking.k8s.io, kind: GRPCRoute}]
    conditions:
      - {type: Accepted, status: "True", reason: Accepted, message: ok, observedGeneration: 1, lastTransitionTime: "2026-01-01T00:00:00Z"}
      - {type: ResolvedRefs, status: "True", reason: ResolvedRefs, message: ok, observedGeneration: 1, lastTransitionTime: "2026-01-01T00:00:00Z"}
      - {type: Programmed, status: "True", reason: Programmed, message: ok, observedGeneration: 1, lastTransitionTime: "2026-01-01T00:00:00Z"}
      - {type: Conflicted, status: "False", reason: NoConflicts, message: ok, observedGeneration: 1, lastTransitionTime: "2026-01-01T00:00:00Z"}
  - name: https
    attachedRoutes: 1
    supportedKinds: [{group: gateway.networking.k8s.io, kind: HTTPRoute}, {group: gateway.networking.k8s.io, kind: GRPCRoute}]
    conditions:
      - {type: Accepted, status: "True", reason: Accepted, message: ok, observedGeneration: 1, lastTransitionTime: "2026-01-01T00:00:00Z"}
      - {type: ResolvedRefs, status: "True", reason: ResolvedRefs, message: ok, observedGeneration: 1, lastTransitionTime: "2026-01-01T00:00:00Z"}
      - {type: Programmed, status: "True", reason: Programmed, message: ok, observedGeneration: 1, lastTransitionTime: "2026-01-01T00:00:00Z"}
      - {type: Conflicted, status: "False", reason: NoConflicts, message: ok, observedGeneration: 1, lastTransitionTime: "2026-01-01T00:00:00Z"}`
	routeStatus = `parents:
  - parentRef: {group: gateway.networking.k8s.io, kind: Gateway, name: web%s}
    controllerName: example.com/gateway-controller
    conditions:
      - {type: Accepted, status: "True", reason: Accepted, message: ok, observedGeneration: 1, lastTransitionTime: "2026-01-01T00:00:00Z"}
      - {type: ResolvedRefs, status: "%s", reason: %s, message: seeded, observedGeneration: 1, lastTransitionTime: "2026-01-01T00:00:00Z"}`
)

// TestClusterPullAndCheck runs against a real kube-apiserver and etcd:
// check --crds FILE with the cluster's own CRDs (kubectl get crd -o yaml)
// judges as the bundle they came from; check --cluster reports a seeded
// disagreement (exit 1) and exits 0 once the controller's status agrees;
// pull writes clean manifests without the
// Secret (the HTTPS listener gets a local certificate) and up serves the
// pulled routes; pull --secrets also writes what routes and policies refer
// to in other namespaces (Service, EndpointSlice, ReferenceGrant), the CA
// bundle ConfigMap and the Secret, in files only their owner reads.
func TestClusterPullAndCheck(t *testing.T) {
	c := startCluster(t)
	c.installGatewayAPICRDs(t)

	// --crds FILE with what kubectl get crd -o yaml prints on this cluster
	// (gwdev's v1.7.0 experimental CRDs, as the API server stores them)
	// judges as --crds v1.7.0-experimental does.
	crds := filepath.Join(t.TempDir(), "cluster-crds.yaml")
	writeTestFile(t, crds, c.getCRDs(t))
	for _, sample := range []string{"listener-filters", "default-gateway", "tcp-udp", "listenerset", "mesh"} {
		src := filepath.Join("..", "..", "samples", sample)
		want, _, wantCode := runGwdev(t, "", "check", "--now", "2026-01-01T00:00:00Z", "--crds", "v1.7.0-experimental", src)
		got, errOut, code := runGwdev(t, "", "check", "--now", "2026-01-01T00:00:00Z", "--crds", crds, src)
		want = durations.ReplaceAllString(want, "in D")
		got = strings.ReplaceAll(durations.ReplaceAllString(got, "in D"), "cluster-crds.yaml", "v1.7.0-experimental")
		if got != want || code != wantCode {
			t.Errorf("%s: --crds FILE (the API server's CRDs) exit %d, --crds v1.7.0-experimental exit %d\n--- FILE:\n%s%s--- bundle:\n%s", sample, code, wantCode, got, errOut, want)
		}
	}
	ca, caKey := testCA(t)
	crt, key := testLeaf(t, ca, caKey, &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "shop.example.com"},
		DNSNames: []string{"shop.example.com"}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	httpPort, httpsPort := freePort(t), freePort(t)
	c.apply(t, clusterObjects(httpPort, httpsPort, crt, key))
	c.setStatus(t, "GatewayClass", "", "cluster-gw", classStatus)
	c.setStatus(t, "Gateway", "default", "web", gatewayStatus)
	c.setStatus(t, "HTTPRoute", "default", "shop", fmt.Sprintf(routeStatus, "", "True", "ResolvedRefs"))
	// Seeded: the controller says the orphan's refs resolve; its Service
	// does not exist.
	c.setStatus(t, "HTTPRoute", "default", "orphan", fmt.Sprintf(routeStatus, ", sectionName: http", "True", "ResolvedRefs"))

	stdout, stderr, code := runGwdev(t, "", "check", "--cluster", "--kubeconfig", c.kubeconfig, "--context", "test")
	want := "HTTPRoute/default/orphan parent Gateway default/web/http  ResolvedRefs: controller True (ResolvedRefs), spec False (BackendNotFound)"
	if code != 1 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "GatewayClass cluster-gw: controller example.com/gateway-controller") {
		t.Fatalf("check --cluster: exit %d, want 1 and\n  %s\n%s%s", code, want, stdout, stderr)
	}
	if strings.Count(stdout, "  ✗ ") != 1 {
		t.Errorf("want exactly the seeded disagreement:\n%s", stdout)
	}
	t.Logf("check --cluster said:\n%s", stdout)

	c.setStatus(t, "HTTPRoute", "default", "orphan", fmt.Sprintf(routeStatus, ", sectionName: http", "False", "BackendNotFound"))
	stdout, stderr, code = runGwdev(t, "", "check", "--cluster", "--kubeconfig", c.kubeconfig, "--context", "test", "-n", "default")
	t.Logf("check --cluster with agreeing status said:\n%s", stdout)
	if code != 0 || !strings.Contains(stdout, "The controller's status agrees with the spec: 14 conditions compared.") ||
		!strings.Contains(stdout, "Not compared (reasons of the implementation's own, which gwdev does not compute): ProxyReady ×1") {
		t.Fatalf("check --cluster with agreeing status: exit %d, want 0:\n%s%s", code, stdout, stderr)
	}

	stdout, stderr, code = runGwdev(t, "", "check", "--cluster", "--kubeconfig", c.kubeconfig, "-A")
	if code != 0 || !strings.Contains(stdout, "every namespace: 7 objects read") {
		t.Fatalf("check --cluster -A: exit %d, want 0 and the same 7 objects:\n%s%s", code, stdout, stderr)
	}

	dir := filepath.Join(t.TempDir(), "pulled")
	stdout, stderr, code = runGwdev(t, "", "pull", "--kubeconfig", c.kubeconfig, "--context", "test", "--ca-dir", t.TempDir(), dir)
	if code != 0 {
		t.Fatalf("pull: exit %d\n%s%s", code, stdout, stderr)
	}
	t.Logf("pull said:\n%s", stdout)
	var all strings.Builder
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			all.Write(data)
		}
		return nil
	})
	for _, bad := range []string{"managedFields", "resourceVersion", "uid:", "status:", "clusterIP:"} {
		if strings.Contains(all.String(), bad) {
			t.Errorf("pulled manifests hold %q", bad)
		}
	}
	if strings.Contains(all.String(), b64(key)) {
		t.Errorf("pull without --secrets wrote the cluster's private key")
	}
	for _, f := range []string{"cluster/gatewayclasses.yaml", "default/gateways.yaml", "default/httproutes.yaml", "default/services.yaml", "cluster/namespaces.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("pull wrote no %s: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "gwdev-certs.yaml")); err != nil {
		t.Errorf("no local certificate for the HTTPS listener: %v", err)
	}

	out := runUp(t, &upOptions{debounce: 10 * time.Millisecond, kustomize: true, noTUI: true}, dir)
	client := &http.Client{Timeout: 5 * time.Second}
	waitForUp(t, out, "the pulled route served", func() bool {
		code, svc := echoGet(client, httpPort, "shop.example.com")
		return code == 200 && svc == "shop"
	})

	// What the routes refer to: a Service in another namespace with its
	// EndpointSlice and the ReferenceGrant that allows it, a
	// BackendTLSPolicy's CA bundle ConfigMap; with --secrets, the listener's
	// Secret in a file only its owner reads.
	c.apply(t, crossNamespaceObjects(string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw}))))
	dir = filepath.Join(t.TempDir(), "pulled")
	stdout, stderr, code = runGwdev(t, "", "pull", "--kubeconfig", c.kubeconfig, "--context", "test", "-n", "default", "--secrets", dir)
	if code != 0 {
		t.Fatalf("pull --secrets: exit %d\n%s%s", code, stdout, stderr)
	}
	for f, want := range map[string]string{
		"other/services.yaml":             "name: api",
		"other/endpointslices.yaml":       "10.0.0.9",
		"other/referencegrants.yaml":      "name: from-default",
		"default/backendtlspolicies.yaml": "name: shop-tls",
		"default/configmaps.yaml":         "name: shop-ca",
		"default/secrets.yaml":            b64(key),
	} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !strings.Contains(string(data), want) {
			t.Errorf("pull --secrets: %s (%v) lacks %q:\n%s\n%s", f, err, want, data, stdout)
			continue
		}
		if fi, _ := os.Stat(filepath.Join(dir, f)); fi.Mode().Perm() != 0o600 {
			t.Errorf("pull --secrets: %s is %v, want -rw-------", f, fi.Mode().Perm())
		}
		if strings.Contains(string(data), "managedFields") || strings.Contains(string(data), "resourceVersion") {
			t.Errorf("pull --secrets: %s is not clean:\n%s", f, data)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "gwdev-certs.yaml")); err == nil {
		t.Errorf("pull --secrets made local certificates too")
	}
}

// crossNamespaceObjects are a route to a Service in namespace other (its
// EndpointSlice, the ReferenceGrant allowing it) and a BackendTLSPolicy
// whose CA bundle is a ConfigMap.
func crossNamespaceObjects(caPEM string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata: {name: other}
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: other}
spec: {ports: [{port: 80}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: api-1, namespace: other, labels: {kubernetes.io/service-name: api}}
addressType: IPv4
endpoints: [{addresses: [10.0.0.9]}]
ports: [{port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ReferenceGrant
metadata: {name: from-default, namespace: other}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: default}]
  to: [{group: "", kind: Service}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: cross, namespace: default}
spec:
  parentRefs: [{name: web, sectionName: http}]
  hostnames: [api.example.com]
  rules: [{backendRefs: [{name: api, namespace: other, port: 80}]}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: shop-ca, namespace: default}
data: {ca.crt: %q}
---
apiVersion: gateway.networking.k8s.io/v1
kind: BackendTLSPolicy
metadata: {name: shop-tls, namespace: default}
spec:
  targetRefs: [{group: "", kind: Service, name: shop}]
  validation: {caCertificateRefs: [{group: "", kind: ConfigMap, name: shop-ca}], hostname: shop.internal}`, caPEM)
}
