package conformance

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"sigs.k8s.io/gateway-api/conformance/utils/kubernetes"
)

// TestEchoBasicContainer: a Pod's echo-basic container is upstream's
// program, reached on the Pod IP and the container's ports: it answers
// with the Pod's name and namespace from its environment, h2c on 3001,
// HTTPS with the mounted Secret's certificate and the TLS it really
// negotiated; a port it does not listen on refuses; a reset it sends
// (/retry/) reaches the client as a reset; stopping it closes the ports.
func TestEchoBasicContainer(t *testing.T) {
	api, err := newAPIServer()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sec := kubernetes.MustCreateSelfSignedCertSecret(t, "ns", "certs", []string{"tls-backend.example"})
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(sec.Data[corev1.TLSCertKey])
	if err := api.Create(ctx, sec); err != nil {
		t.Fatal(err)
	}
	ip := fmt.Sprintf("127.1.%d.%d", 251+rand.IntN(4), 1+rand.IntN(250))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "backend-abc-xyz", Namespace: "ns"},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "backend", Image: "registry.k8s.io/gateway-api/conformance/echo-basic:v0.1.0",
				VolumeMounts: []corev1.VolumeMount{{Name: "secret-volume", MountPath: "/etc/secret-volume"}},
				Env: []corev1.EnvVar{
					{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
					{Name: "NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
					{Name: "TLS_SERVER_CERT", Value: "/etc/secret-volume/crt"},
					{Name: "TLS_SERVER_PRIVKEY", Value: "/etc/secret-volume/key"},
				}}},
			Volumes: []corev1.Volume{{Name: "secret-volume", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: "certs", Items: []corev1.KeyToPath{{Key: "tls.crt", Path: "crt"}, {Key: "tls.key", Path: "key"}}}}}},
		},
		Status: corev1.PodStatus{PodIP: ip},
	}
	ct, err := startContainer(ctx, t, api, pod, &pod.Spec.Containers[0])
	if err != nil {
		t.Fatal(err)
	}
	defer ct.stop()

	type answer struct {
		Namespace string `json:"namespace"`
		Pod       string `json:"pod"`
		Proto     string `json:"proto"`
		TLS       *struct {
			ServerName string `json:"serverName"`
		} `json:"tls"`
	}
	get := func(c *http.Client, url string) answer {
		t.Helper()
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var a answer
		if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	if a := get(http.DefaultClient, "http://"+ip+":3000/"); a.Pod != pod.Name || a.Namespace != "ns" || a.TLS != nil {
		t.Errorf("port 3000 answered %+v, want pod %s of ns without TLS", a, pod.Name)
	}
	h2c := &http.Transport{Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	if a := get(&http.Client{Transport: h2c}, "http://"+ip+":3001/"); a.Proto != "HTTP/2.0" || a.Pod != pod.Name {
		t.Errorf("port 3001 answered %+v, want HTTP/2.0 from pod %s", a, pod.Name)
	}
	https := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "tls-backend.example"}}
	if a := get(&http.Client{Transport: https}, "https://"+ip+":8443/"); a.TLS == nil || a.TLS.ServerName != "tls-backend.example" {
		t.Errorf("port 8443 answered %+v, want the TLS the client negotiated (SNI tls-backend.example)", a)
	}
	if _, err := net.DialTimeout("tcp", ip+":3002", time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("dialing a port the container does not listen on: %v, want connection refused", err)
	}
	// /retry/ resets the connection on a failing attempt: the client sees it.
	c, err := net.Dial("tcp", ip+":3000")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET /retry/?uuid=u1&succeedAfter=1 HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(c); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("a failing /retry/ attempt ended with %v, want a connection reset", err)
	}
	c.Close()
	if lines := strings.Join(ct.log.Since(time.Time{}), "\n"); !strings.Contains(lines, "Echoing back request made to / to client") {
		t.Errorf("the container's log lacks echo-basic's line for a request:\n%s", lines)
	}
	ct.stop()
	if _, err := net.DialTimeout("tcp", ip+":3000", time.Second); err == nil {
		t.Error("port 3000 still answers after the container stopped")
	}
}
