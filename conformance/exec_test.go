package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/apimachinery/pkg/util/httpstream/spdy"
	"k8s.io/apimachinery/pkg/util/remotecommand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

// execFunc runs a command "inside" Pod ns/pod and returns what it writes
// to stdout; an error is the command failing.
type execFunc func(ctx context.Context, ns, pod string, command []string) (string, error)

// execServer is the one part of a real API server the mesh tests need
// besides the fake client: POST /api/v1/namespaces/{ns}/pods/{pod}/exec,
// over SPDY with the v4 channel protocol, as client-go's remotecommand
// (which the suite's MeshPod uses) speaks it. The command runs in process
// (execFunc); nothing is executed on the machine.
type execServer struct {
	srv *httptest.Server
	run execFunc
}

// newExecServer starts the exec endpoint on 127.0.0.1 (a random port).
func newExecServer(run execFunc) *execServer {
	e := &execServer{run: run}
	e.srv = httptest.NewServer(e)
	return e
}

// restConfig is the REST config that reaches the endpoint.
func (e *execServer) restConfig() *rest.Config {
	return &rest.Config{Host: e.srv.URL, Timeout: time.Minute}
}

// Close stops the endpoint.
func (e *execServer) Close() { e.srv.Close() }

func (e *execServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if r.Method != http.MethodPost || len(parts) != 7 || parts[0] != "api" || parts[1] != "v1" || parts[2] != "namespaces" ||
		parts[4] != "pods" || parts[6] != "exec" {
		http.Error(w, "gwdev harness: only pods/exec is served here", http.StatusNotFound)
		return
	}
	ns, pod, q := parts[3], parts[5], r.URL.Query()
	if q.Get("stdin") == "true" || q.Get("tty") == "true" {
		http.Error(w, "gwdev harness: exec without stdin or a TTY only", http.StatusBadRequest)
		return
	}
	if _, err := httpstream.Handshake(r, w, []string{remotecommand.StreamProtocolV4Name}); err != nil {
		return // Handshake answered
	}
	streams := make(chan httpstream.Stream, 4)
	conn := spdy.NewResponseUpgrader().UpgradeResponse(w, r, func(s httpstream.Stream, _ <-chan struct{}) error {
		streams <- s
		return nil
	})
	if conn == nil {
		return // UpgradeResponse answered
	}
	defer conn.Close()
	got := map[string]httpstream.Stream{}
	want := []string{corev1.StreamTypeError}
	for _, typ := range []string{corev1.StreamTypeStdout, corev1.StreamTypeStderr} {
		if q.Get(typ) == "true" {
			want = append(want, typ)
		}
	}
	timeout := time.NewTimer(30 * time.Second)
	defer timeout.Stop()
	for len(got) < len(want) {
		select {
		case s := <-streams:
			got[s.Headers().Get(corev1.StreamType)] = s
		case <-timeout.C:
			return
		case <-r.Context().Done():
			return
		}
	}
	out, err := e.run(r.Context(), ns, pod, q["command"])
	if s := got[corev1.StreamTypeStdout]; s != nil {
		_, _ = s.Write([]byte(out))
		_ = s.Close()
	}
	if s := got[corev1.StreamTypeStderr]; s != nil {
		if err != nil {
			_, _ = fmt.Fprintln(s, err)
		}
		_ = s.Close()
	}
	es := got[corev1.StreamTypeError]
	if err != nil {
		st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Message: err.Error()}
		_ = json.NewEncoder(es).Encode(st)
	}
	_ = es.Close()
	// Wait for the client to close its side, so closing the connection
	// cannot cut the answer short.
	select {
	case <-conn.CloseChan():
	case <-time.After(5 * time.Second):
	}
}

// execClientset is the harness's clientset with a CoreV1 REST client that
// reaches the exec endpoint: the fake clientset's is nil, and MeshPod posts
// exec requests through it.
type execClientset struct {
	kubernetes.Interface
	core corev1client.CoreV1Interface
}

// CoreV1 is the fake's CoreV1 with a real RESTClient.
func (c *execClientset) CoreV1() corev1client.CoreV1Interface { return c.core }

type execCoreV1 struct {
	corev1client.CoreV1Interface
	rc rest.Interface
}

func (c execCoreV1) RESTClient() rest.Interface { return c.rc }

// withExec wraps cs so that CoreV1().RESTClient() posts to e.
func withExec(cs kubernetes.Interface, e *execServer) (kubernetes.Interface, error) {
	cfg := e.restConfig()
	cfg.APIPath = "/api"
	cfg.GroupVersion = &corev1.SchemeGroupVersion
	cfg.NegotiatedSerializer = scheme.Codecs.WithoutConversion()
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("exec REST client: %w", err)
	}
	return &execClientset{Interface: cs, core: execCoreV1{CoreV1Interface: cs.CoreV1(), rc: rc}}, nil
}
