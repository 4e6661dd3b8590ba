package conformance

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// podWrites records the kubelet's Pod writes in order: "create <name>"
// and "ready <name>".
type podWrites struct {
	mu  sync.Mutex
	log []string
}

func (w *podWrites) add(what string, obj client.Object) {
	if _, ok := obj.(*corev1.Pod); ok {
		w.mu.Lock()
		w.log = append(w.log, what+" "+obj.GetName())
		w.mu.Unlock()
	}
}

// newKubeletAPI returns the fake API with the kubelet's Pod writes
// recorded, and a kubelet on it whose clock is *now.
func newKubeletAPI(t *testing.T, now *time.Time) (*apiServer, *kubelet, *podWrites) {
	t.Helper()
	api, err := newAPIServer()
	if err != nil {
		t.Fatal(err)
	}
	w := &podWrites{}
	api.WithWatch = interceptor.NewClient(api.WithWatch, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			err := c.Create(ctx, obj, opts...)
			if err == nil {
				w.add("create", obj)
			}
			return err
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			err := c.SubResource(sub).Update(ctx, obj, opts...)
			if err == nil {
				w.add("ready", obj)
			}
			return err
		},
	})
	return api, &kubelet{api: api, now: func() time.Time { return *now }}, w
}

func createDeployment(t *testing.T, api client.Client, ns, name string, replicas int32) {
	t.Helper()
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": name}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": name}},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: name, Image: "example/echo:v1"}}},
			},
		},
	}
	if err := api.Create(context.Background(), d); err != nil {
		t.Fatal(err)
	}
}

// namespaceReady is the suite's readiness check of a namespace's Pods
// (kubernetes.NamespacesMustBeReady): at least one Pod, and every Pod
// Ready, Succeeded or being deleted.
func namespaceReady(t *testing.T, api client.Client, ns string) bool {
	t.Helper()
	var pods corev1.PodList
	if err := api.List(context.Background(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) == 0 {
		return false
	}
	for _, p := range pods.Items {
		ready := slices.ContainsFunc(p.Status.Conditions, func(c corev1.PodCondition) bool {
			return c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue
		})
		if !ready && p.Status.Phase != corev1.PodSucceeded && p.DeletionTimestamp == nil {
			return false
		}
	}
	return true
}

func podsOf(t *testing.T, api client.Client, ns string) []corev1.Pod {
	t.Helper()
	var pods corev1.PodList
	if err := api.List(context.Background(), &pods, client.InNamespace(ns)); err != nil {
		t.Fatal(err)
	}
	return pods.Items
}

// TestKubeletNamespaceNotReadyBeforeEveryDeploymentHasPods applies a
// namespace's Deployments as the suite does, one at a time, with a pass
// of the kubelet between them: the namespace must not look ready to the
// suite's wait while one of them has no Pod (MeshGRPCRouteRequestHeaderModifier
// found no echo-v2 Pod when it did), and every Pod must be created before
// any is started.
func TestKubeletNamespaceNotReadyBeforeEveryDeploymentHasPods(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	api, k, w := newKubeletAPI(t, &now)
	const ns = "gateway-conformance-mesh"
	pass := func() {
		t.Helper()
		if err := k.reconcile(ctx); err != nil {
			t.Fatal(err)
		}
	}

	createDeployment(t, api, ns, "echo-v1", 1)
	pass()
	createDeployment(t, api, ns, "echo-v2", 2)
	if namespaceReady(t, api, ns) {
		t.Fatalf("the namespace is ready while echo-v2 has no Pod: %v", w.log)
	}
	// Passes until everything runs, none of them started a startDelay
	// after the previous one.
	for range 10 {
		now = now.Add(startDelay / 3)
		pass()
		pods := podsOf(t, api, ns)
		if namespaceReady(t, api, ns) && len(pods) != 3 {
			t.Fatalf("the namespace is ready with %d Pods of 3: %v", len(pods), w.log)
		}
	}
	if !namespaceReady(t, api, ns) {
		t.Fatalf("the namespace is not ready after %v: %v", 10*startDelay/3, w.log)
	}
	creates, firstReady := 0, -1
	for i, e := range w.log {
		switch e[:6] {
		case "create":
			creates++
			if firstReady >= 0 {
				t.Errorf("Pod written %q after a Pod was started: %v", e, w.log)
			}
		case "ready ":
			if firstReady < 0 {
				firstReady = i
			}
		}
	}
	if creates != 3 || len(w.log) != 6 {
		t.Errorf("want 3 Pods created and 3 started once each, got %v", w.log)
	}
}

// TestKubeletStartsEachReplicaOnce: a Deployment of two replicas has two
// Pods, each started once, over passes that find them created and not
// started.
func TestKubeletStartsEachReplicaOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	api, k, w := newKubeletAPI(t, &now)
	createDeployment(t, api, "ns", "web-backend", 2)
	for range 4 {
		if err := k.reconcile(ctx); err != nil {
			t.Fatal(err)
		}
		now = now.Add(startDelay)
	}
	pods := podsOf(t, api, "ns")
	if len(pods) != 2 {
		t.Fatalf("want 2 Pods, got %d: %v", len(pods), w.log)
	}
	for _, p := range pods {
		if p.Status.Phase != corev1.PodRunning {
			t.Errorf("Pod %s is %q, want Running", p.Name, p.Status.Phase)
		}
	}
	want := []string{"create " + pods[0].Name, "create " + pods[1].Name, "ready " + pods[0].Name, "ready " + pods[1].Name}
	got := slices.Clone(w.log)
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("Pod writes %v, want %v in some order", w.log, want)
	}
}

// TestPodNameReplicasDiffer: the replicas of a Deployment get distinct
// Pod names (the leading hash digits, used before, gave almost half of
// them one name).
func TestPodNameReplicasDiffer(t *testing.T) {
	for i := range 1000 {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "infra-backend-v1",
			UID: types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", i))}}
		seen := map[string]bool{}
		for r := range 3 {
			n := podName(d, r)
			if seen[n] {
				t.Fatalf("uid %s: replicas share Pod name %s", d.UID, n)
			}
			seen[n] = true
		}
	}
}
