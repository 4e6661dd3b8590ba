// Package kubetest starts a real kube-apiserver (built from k8s.io/kubernetes
// by .ci/tools.sh) on a real etcd (Debian's etcd-server) for tests: the
// cluster tests of cmd/gwdev and the conformance suite's real-API-server
// run. Only tests import it.
package kubetest

import (
	"bytes"
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
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/internal/freeport"
)

// Cluster is a running kube-apiserver reached through a kubeconfig with a
// client certificate of system:masters (context "test").
type Cluster struct {
	Kubeconfig string
	Config     *rest.Config
	Dyn        dynamic.Interface
}

var toolPaths sync.Map

// Tool returns the path of an external program .ci/tools.sh builds or
// finds (kube-apiserver, helm); script is that script's path. The test is
// skipped, saying why, when it cannot be built here.
func Tool(t testing.TB, script, name string) string {
	t.Helper()
	if p, ok := toolPaths.Load(name); ok {
		return p.(string)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("bash", script, name)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("%s cannot be built here (%v): %s", name, err, strings.TrimSpace(stderr.String()))
	}
	path := strings.TrimSpace(string(out))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s %s printed %q: %v", script, name, path, err)
	}
	toolPaths.Store(name, path)
	return path
}

// Start starts etcd and the kube-apiserver at path apiserver on free
// loopback ports for the test and waits until it is ready. It skips,
// saying so, when etcd is not installed.
func Start(t testing.TB, apiserver string) *Cluster {
	t.Helper()
	etcd, err := exec.LookPath("etcd")
	if err != nil {
		t.Skip("etcd is not installed (Debian: apt-get install etcd-server): the cluster tests need a real etcd")
	}
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
	clientPort, peerPort := freeport.TCP(t, "127.0.0.1"), freeport.TCP(t, "127.0.0.1")
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	start(etcd, "etcd.log", "--name", "gwdev-test", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "gwdev-test="+peerURL)

	ca, caKey := CA(t)
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.Raw})
	writeFile(t, filepath.Join(dir, "ca.crt"), caPEM)
	clientCert, clientKey := Leaf(t, ca, caKey, &x509.Certificate{SerialNumber: big.NewInt(2),
		Subject:     pkix.Name{CommonName: "gwdev-test", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}})
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "sa.key"), pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}))
	port := freeport.TCP(t, "127.0.0.1")
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
	b64 := base64.StdEncoding.EncodeToString
	writeFile(t, kubeconfig, fmt.Appendf(nil, `apiVersion: v1
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
			t.Fatalf("kube-apiserver %s; its log ends:\n%s\netcd's:\n%s", fail, tail(logs, 3000), tail(etcdLog, 1500))
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
	return &Cluster{Kubeconfig: kubeconfig, Config: cfg, Dyn: dyn}
}

// InstallCRDs creates the CustomResourceDefinitions of the YAML files (other
// kinds in them are left out) and waits until they are established.
func (c *Cluster) InstallCRDs(t testing.TB, files []string) {
	t.Helper()
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
		if _, err := c.Dyn.Resource(gvr).Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating CRD %s: %v", u.GetName(), err)
		}
		names = append(names, u.GetName())
	}
	deadline := time.Now().Add(60 * time.Second)
	for _, name := range names {
		for {
			u, err := c.Dyn.Resource(gvr).Get(context.Background(), name, metav1.GetOptions{})
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

// CA makes a certificate authority for client certificates.
func CA(t testing.TB) (*x509.Certificate, *ecdsa.PrivateKey) {
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

// Leaf signs tmpl with the CA and returns certificate and key PEM.
func Leaf(t testing.TB, ca *x509.Certificate, caKey *ecdsa.PrivateKey, tmpl *x509.Certificate) (certPEM, keyPEM []byte) {
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

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
