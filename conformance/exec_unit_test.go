package conformance

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/remotecommand"
)

// TestExecServer runs a command through the exec endpoint the way the
// suite's MeshPod does (remotecommand over SPDY): stdout arrives whole, and
// a failing command is an error naming its message.
func TestExecServer(t *testing.T) {
	e := newExecServer(func(_ context.Context, ns, pod string, cmd []string) (string, error) {
		if cmd[0] == "fail" {
			return "", errors.New("it failed")
		}
		return ns + "/" + pod + ": " + strings.Join(cmd, " ") + "\n" + strings.Repeat("x", 100000), nil
	})
	defer e.Close()
	cs, err := withExec(k8sfake.NewClientset(), e)
	if err != nil {
		t.Fatal(err)
	}
	run := func(cmd ...string) (string, error) {
		req := cs.CoreV1().RESTClient().Post().Resource("pods").Name("p").Namespace("ns").SubResource("exec").
			VersionedParams(&corev1.PodExecOptions{Container: "echo", Command: cmd, Stdout: true, Stderr: true}, scheme.ParameterCodec)
		ex, err := remotecommand.NewSPDYExecutor(e.restConfig(), "POST", req.URL())
		if err != nil {
			return "", err
		}
		var out, errOut bytes.Buffer
		err = ex.StreamWithContext(context.Background(), remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut})
		return out.String(), err
	}
	out, err := run("client", "http://echo")
	if err != nil || !strings.HasPrefix(out, "ns/p: client http://echo\n") || len(out) != len("ns/p: client http://echo\n")+100000 {
		t.Errorf("exec: %v, %d bytes %.40q", err, len(out), out)
	}
	if _, err := run("fail"); err == nil || !strings.Contains(err.Error(), "it failed") {
		t.Errorf("failing command: %v", err)
	}
}
