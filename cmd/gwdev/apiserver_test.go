package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"math/big"
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
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/internal/kubetest"
)

// testCluster is a real kube-apiserver (built from k8s.io/kubernetes by
// .ci/tools.sh) on a real etcd (Debian's etcd-server), reached through a
// kubeconfig with a client certificate of system:masters.
type testCluster struct {
	kubeconfig string
	dyn        dynamic.Interface
	cluster    *kubetest.Cluster
}

// startCluster starts etcd and kube-apiserver on free loopback ports for
// the test (package kubetest). It skips, saying so, when etcd is not
// installed or kube-apiserver cannot be built.
func startCluster(t *testing.T) *testCluster {
	t.Helper()
	c := kubetest.Start(t, externalTool(t, "kube-apiserver"))
	return &testCluster{kubeconfig: c.Kubeconfig, dyn: c.Dyn, cluster: c}
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
	return kubetest.CA(t)
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
	return kubetest.Leaf(t, ca, caKey, tmpl)
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
	c.cluster.InstallCRDs(t, files)
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
