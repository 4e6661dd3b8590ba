package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	sigsyaml "sigs.k8s.io/yaml"
)

// testCluster is a real kube-apiserver (built from k8s.io/kubernetes by
// .ci/tools.sh) on a real etcd (Debian's etcd-server), reached through a
// kubeconfig with a client certificate of system:masters.
type testCluster struct {
	kubeconfig string
	dyn        dynamic.Interface
}

// startCluster starts etcd and kube-apiserver on free loopback ports for
// the test. It skips, saying so, when etcd is not installed or
// kube-apiserver cannot be built.
func startCluster(t *testing.T) *testCluster {
	t.Helper()
	etcd, err := exec.LookPath("etcd")
	if err != nil {
		t.Skip("etcd is not installed (Debian: apt-get install etcd-server): the cluster tests need a real etcd")
	}
	apiserver := externalTool(t, "kube-apiserver")
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var procs []*exec.Cmd
	exited := make(chan string, 2) // a process that ended before the test did
	t.Cleanup(func() {
		cancel()
		for range procs {
			<-exited
		}
	})
	start := func(name string, logName string, args ...string) {
		cmd := exec.CommandContext(ctx, name, args...)
		log, err := os.Create(filepath.Join(dir, logName))
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout, cmd.Stderr = log, log
		cmd.WaitDelay = 5 * time.Second
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting %s: %v", name, err)
		}
		procs = append(procs, cmd)
		go func() {
			err := cmd.Wait()
			exited <- fmt.Sprintf("%s: %v", filepath.Base(name), err)
		}()
	}
	clientPort, peerPort := freePort(t), freePort(t)
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	start(etcd, "etcd.log", "--name", "gwdev-test", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "gwdev-test="+peerURL)

	ca, caKey := testCA(t)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	writeTestFile(t, filepath.Join(dir, "ca.crt"), caPEM)
	clientCert, clientKey := testClientCert(t, ca, caKey)
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}))
	port := freePort(t)
	start(apiserver, "kube-apiserver.log", "--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--cert-dir", filepath.Join(dir, "serving"), "--client-ca-file", filepath.Join(dir, "ca.crt"),
		"--authorization-mode", "AlwaysAllow", "--service-cluster-ip-range", "10.0.0.0/24",
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", filepath.Join(dir, "sa.key"), "--service-account-signing-key-file", filepath.Join(dir, "sa.key"),
		"--disable-admission-plugins", "ServiceAccount",
		// No Endpoints of its own for the kubernetes Service: the
		// reconciler refuses a loopback address.
		"--endpoint-reconciler-type", "none")

	server := fmt.Sprintf("https://127.0.0.1:%d", port)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeTestFile(t, kubeconfig, fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: %q, insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {client-certificate-data: %s, client-key-data: %s}}]
contexts: [{name: test, context: {cluster: test, user: admin, namespace: default}}]
current-context: test
`, server, b64(clientCert), b64(clientKey)))

	// Ready: /readyz answers 200 (about 3 s once built).
	pair, err := tls.X509KeyPair(clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		Certificates: []tls.Certificate{pair}, InsecureSkipVerify: true}}} //nolint:gosec // the test's own apiserver
	deadline := time.Now().Add(90 * time.Second)
	for {
		resp, err := hc.Get(server + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		fail := ""
		select {
		case e := <-exited:
			exited <- e // for the cleanup
			fail = "exited (" + e + ")"
		default:
			if time.Now().After(deadline) {
				fail = fmt.Sprintf("not ready after 90s (%v)", err)
			}
		}
		if fail != "" {
			logs, _ := os.ReadFile(filepath.Join(dir, "kube-apiserver.log"))
			etcdLog, _ := os.ReadFile(filepath.Join(dir, "etcd.log"))
			t.Fatalf("kube-apiserver %s; its log ends:\n%s\netcd's:\n%s", fail, tailBytes(logs, 3000), tailBytes(etcdLog, 1500))
		}
		time.Sleep(200 * time.Millisecond)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &testCluster{kubeconfig: kubeconfig, dyn: dyn}
}

func tailBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func writeTestFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func b64(data []byte) string { return base64.StdEncoding.EncodeToString(data) }

// testCA makes a certificate authority for client certificates.
func testCA(t *testing.T) (*x509.Certificate, *ecdsa.PrivateKey) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gwdev test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key
}

// testClientCert signs a client certificate in group system:masters.
func testClientCert(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (certPEM, keyPEM []byte) {
	t.Helper()
	return testLeaf(t, ca, caKey, &x509.Certificate{SerialNumber: big.NewInt(2),
		Subject:     pkix.Name{CommonName: "gwdev-test", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
}

// testLeaf signs tmpl with the CA and returns certificate and key PEM.
func testLeaf(t *testing.T, ca *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// installGatewayAPICRDs creates the experimental-channel CRDs of the
// gateway-api module gwdev builds with (its config/crd) and waits until
// they are established.
func (c *testCluster) installGatewayAPICRDs(t *testing.T) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/gateway-api").Output()
	if err != nil {
		t.Fatalf("finding the gateway-api module: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "experimental")
	files, err := filepath.Glob(filepath.Join(dir, "gateway.networking.*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s (%v)", dir, err)
	}
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	var names []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := sigsyaml.Unmarshal(data, &u.Object); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if u.GetKind() != "CustomResourceDefinition" {
			continue // the safe-upgrades ValidatingAdmissionPolicy
		}
		if _, err := c.dyn.Resource(gvr).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating CRD %s: %v", u.GetName(), err)
		}
		names = append(names, u.GetName())
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, name := range names {
		for {
			u, err := c.dyn.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
			if err == nil && established(u) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("CRD %s not established after 60s (%v)", name, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// apply creates the objects of a YAML stream and returns them as created.
func (c *testCluster) apply(t *testing.T, manifests string) {
	t.Helper()
	for _, doc := range strings.Split(manifests, "\n---\n") {
		u := &unstructured.Unstructured{}
		if err := sigsyaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		ri := c.resource(t, u)
		var err error
		for try := 0; try < 50; try++ { // a CRD's resource may take a moment to be served
			if _, err = ri.Create(context.Background(), u, metav1.CreateOptions{}); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatalf("creating %s %s: %v", u.GetKind(), u.GetName(), err)
		}
	}
}

// setStatus writes an object's status as its controller would.
func (c *testCluster) setStatus(t *testing.T, kind, ns, name, status string) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns}}}
	ri := c.resource(t, u)
	cur, err := ri.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := sigsyaml.Unmarshal([]byte(status), &st); err != nil {
		t.Fatalf("%v in:\n%s", err, status)
	}
	cur.Object["status"] = st
	if _, err := ri.UpdateStatus(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("writing the status of %s %s: %v", kind, name, err)
	}
}

// resource is the dynamic client of an object's kind (plural: lower kind
// + "s", "es" after an s, "ies" for a final y after a consonant).
func (c *testCluster) resource(t *testing.T, u *unstructured.Unstructured) dynamic.ResourceInterface {
	t.Helper()
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	if err != nil {
		t.Fatal(err)
	}
	plural := strings.ToLower(u.GetKind()) + "s"
	if strings.HasSuffix(u.GetKind(), "s") {
		plural = strings.ToLower(u.GetKind()) + "es"
	} else if k := strings.ToLower(u.GetKind()); strings.HasSuffix(k, "y") && !strings.ContainsAny(k[len(k)-2:len(k)-1], "aeiou") {
		plural = strings.TrimSuffix(k, "y") + "ies" // policies, not gateways
	}
	r := c.dyn.Resource(gv.WithResource(plural))
	if u.GetKind() == "GatewayClass" || u.GetKind() == "Namespace" {
		return r
	}
	ns := u.GetNamespace()
	if ns == "" {
		ns = "default"
	}
	return r.Namespace(ns)
}

// getCRDs is what `kubectl get crd -o yaml` prints for the cluster: a v1
// List of every CustomResourceDefinition as the API server returns it
// (metadata with managedFields, status, the server's defaults), each item
// with its apiVersion and kind.
func (c *testCluster) getCRDs(t *testing.T) []byte {
	t.Helper()
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	list, err := c.dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	items := make([]any, 0, len(list.Items))
	for _, it := range list.Items {
		items = append(items, it.Object)
	}
	out, err := sigsyaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "metadata": map[string]any{"resourceVersion": ""}, "items": items})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
