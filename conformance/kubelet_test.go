package conformance

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
)

// kubelet stands in for the Deployment controller and the kubelet: every
// Deployment gets its replicas as Pods with a loopback pod IP, and Pods
// whose Deployment is gone are deleted. Pod names are shaped like a
// ReplicaSet's (<deployment>-<hash>-<hash>), which the weight tests rely on.
//
// A Pod's containers of the conformance echo image (echo-basic) run as
// upstream's echo-basic program with the Pod's environment, listening on
// the Pod IP (containers_test.go); the Pod is Ready once they answer. The
// mesh echo image's containers (echo-advanced) are played by a second gwdev
// emulator bound to the Pod IP (serveWorkloads).
type kubelet struct {
	api    *apiServer
	nextIP int
	// t gives the containers' host ports (freeport); nil: Pods run no
	// echo-basic containers (unit tests).
	t testing.TB
	// workload serves the echo containers of the mesh echo image (nil:
	// none).
	workload *emulator.Server
	served   string
	// containers are the running echo-basic containers by Pod
	// ("namespace/name"), containers_test.go.
	mu         sync.Mutex
	containers map[string][]*container
	// namespaces finalises deleted namespaces on a real API server (nil:
	// the fake deletes them at once).
	namespaces *namespaceFinalizer
	// created is when the kubelet created each Pod ("namespace/name")
	// that it has not started yet (startDelay).
	created map[string]time.Time
	// now is the clock (nil: time.Now).
	now func() time.Time
}

// startDelay is how long a Pod the kubelet created waits before it is
// started and marked Ready: it is started only by a pass whose list of
// Deployments was read at least this long after the Pod was created.
//
// The suite applies a namespace's manifest one object at a time (the
// mesh's echo-v1 and echo-v2 Deployments about 50 ms apart) and then
// waits for the Pods that exist there to be Ready. A pass of the
// controller loop may read the Deployments between two of them; if it
// then made echo-v1's Pod Ready, the wait could pass before the next pass
// created echo-v2's, and MeshGRPCRouteRequestHeaderModifier found no
// echo-v2 Pod (the real-API-server run of CI). Creating every missing Pod
// before starting any closes that window within one pass only; the delay
// closes it across passes: the pass that makes echo-v1's Pod Ready read
// the Deployments after echo-v2's was created (when the manifest took
// less than startDelay to apply), so echo-v2's Pod exists, not Ready,
// before echo-v1's is Ready. In a cluster the container's start gives
// the Deployment controller that time.
const startDelay = time.Second

// podNet is the /16 the pod IPs are taken from: loopback by default, so
// that nothing could ever leave the machine. A real API server refuses
// loopback addresses in EndpointSlices, so make conformance-apiserver runs
// the suite in its own network namespace with 10.244.0.0/16 on its
// loopback interface and passes -gwdev.podnet 10.244.
var podNet = flag.String("gwdev.podnet", "127.1", "the first two octets of the pod IPs (a /16 this machine answers on)")

// podIP returns the next pod IP: 127.1.0.1, 127.1.0.2, … A Pod of the mesh
// echo image always gets a loopback one (127.1.…): a gwdev emulator plays
// its containers and binds loopback addresses only.
func (k *kubelet) podIP(mesh bool) string {
	k.nextIP++
	prefix := *podNet
	if mesh {
		prefix = "127.1"
	}
	return fmt.Sprintf("%s.%d.%d", prefix, k.nextIP/250, k.nextIP%250+1)
}

// reconcile runs one pass: it creates every missing Pod of every
// Deployment (not Ready), then starts the Pods created at least
// startDelay before this pass read the Deployments and marks them Ready,
// as a Deployment controller creates Pods before a kubelet runs them; it
// deletes the Pods no Deployment wants and writes the EndpointSlices of
// the running ones. A Pod that fails to start does not hold up the others.
func (k *kubelet) reconcile(ctx context.Context) error {
	if k.namespaces != nil {
		if err := k.namespaces.finalize(ctx); err != nil {
			return err
		}
	}
	listed := k.clock()
	var deps appsv1.DeploymentList
	if err := k.api.List(ctx, &deps); err != nil {
		return fmt.Errorf("listing Deployments: %w", err)
	}
	var pods corev1.PodList
	if err := k.api.List(ctx, &pods); err != nil {
		return fmt.Errorf("listing Pods: %w", err)
	}
	want := map[string]bool{}
	var pending []*corev1.Pod
	for i := range deps.Items {
		d := &deps.Items[i]
		replicas := 1
		if d.Spec.Replicas != nil {
			replicas = int(*d.Spec.Replicas)
		}
		for r := range replicas {
			name := podName(d, r)
			if want[d.Namespace+"/"+name] {
				continue
			}
			want[d.Namespace+"/"+name] = true
			pod, err := k.ensurePod(ctx, d, name, &pods)
			if err != nil {
				return err
			}
			if pod != nil {
				pending = append(pending, pod)
			}
		}
	}
	// Every Pod the Deployments want exists now: start those old enough.
	var errs []error
	started := map[string]*corev1.Pod{}
	for _, pod := range pending {
		key := pod.Namespace + "/" + pod.Name
		if at, ok := k.created[key]; ok && listed.Sub(at) < startDelay {
			continue
		}
		if err := k.runPod(ctx, pod); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(k.created, key)
		started[key] = pod
	}
	var running []corev1.Pod
	for i := range pods.Items {
		p := &pods.Items[i]
		key := p.Namespace + "/" + p.Name
		if want[key] && p.DeletionTimestamp == nil {
			if s := started[key]; s != nil {
				p = s
			}
			if p.Status.Phase == corev1.PodRunning {
				running = append(running, *p)
			}
			continue
		}
		// At once: there is no kubelet whose confirmation a graceful
		// deletion on a real API server would wait for.
		if err := k.api.Delete(ctx, p, client.GracePeriodSeconds(0)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Pod %s/%s: %w", p.Namespace, p.Name, err)
		}
		k.stopContainers(key)
		delete(k.created, key)
	}
	if err := k.reconcileEndpoints(ctx, running); err != nil {
		return err
	}
	if err := k.serveWorkloads(running); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// clock returns the kubelet's time.
func (k *kubelet) clock() time.Time {
	if k.now != nil {
		return k.now()
	}
	return time.Now()
}

// meshEchoPorts are the HTTP and gRPC (h2c) ports of the mesh echo image
// (echo-advanced, args --port=8080 --grpc=7070 in mesh/manifests.yaml).
var meshEchoPorts = []int32{8080, 7070}

// isEchoBasic reports whether c runs the conformance echo image, which
// the kubelet runs as upstream's program (containers_test.go).
func isEchoBasic(c corev1.Container) bool { return strings.Contains(c.Image, "/echo-basic:") }

// isEchoAdvanced reports whether c runs the mesh echo image (istio's echo),
// which a second gwdev emulator plays (serveWorkloads).
func isEchoAdvanced(c corev1.Container) bool { return strings.Contains(c.Image, "/echo-advanced:") }

// serveWorkloads binds the echo containers of the running Pods that use
// the mesh echo image (echo-advanced), which is not a Go program of the
// suite's modules: a second gwdev emulator answers for them.
func (k *kubelet) serveWorkloads(pods []corev1.Pod) error {
	if k.workload == nil {
		return nil
	}
	t := &engine.Table{}
	for _, p := range pods {
		app := ""
		for _, o := range p.OwnerReferences {
			app = o.Name
		}
		if p.Status.PodIP == "" || app == "" {
			continue
		}
		if slices.ContainsFunc(p.Spec.Containers, isEchoAdvanced) {
			t.Gateways = append(t.Gateways, podTable(p, app, meshEchoPorts))
		}
	}
	slices.SortFunc(t.Gateways, func(a, b *engine.GatewayTable) int { return strings.Compare(a.Name, b.Name) })
	var key strings.Builder
	for _, g := range t.Gateways {
		key.WriteString(g.Name + "=" + g.Address + ";")
	}
	if key.String() == k.served {
		return nil
	}
	if err := k.workload.Apply(t).Err(); err != nil {
		k.served = ""
		return fmt.Errorf("serving Pod workloads: %w", err)
	}
	k.served = key.String()
	return nil
}

// podTable is the routing table of one Pod's echo container: every
// request on its echo ports goes to gwdev's echo backend for Service
// <namespace>/<app>, answering as the Pod (its name in the echo's "pod").
func podTable(p corev1.Pod, app string, ports []int32) *engine.GatewayTable {
	name := "pod/" + p.Namespace + "/" + p.Name
	g := &engine.GatewayTable{Name: name, Address: p.Status.PodIP,
		Gateway: engine.ObjectKey{Kind: "Pod", Namespace: p.Namespace, Name: p.Name}}
	svc := engine.ObjectKey{Kind: "Service", Namespace: p.Namespace, Name: app}
	for _, port := range ports {
		ln := fmt.Sprintf("%s/port/%d", name, port)
		rule := &engine.RouteRule{
			Name: ln + "/rule", Route: g.Gateway,
			HTTP: &table.HTTPMatch{Path: table.PathMatch{Type: table.MatchPathPrefix}},
			Backends: []*engine.Backend{{Name: ln + "/backend", Service: svc, Port: port, Weight: 1,
				Target: &engine.Target{Kind: engine.TargetEcho, Pods: []string{p.Name}, Why: "the Pod's echo container"}}},
		}
		g.Ports = append(g.Ports, &engine.PortTable{Port: port, Transport: "TCP", Listeners: []*engine.ListenerTable{{
			Name: ln, Owner: g.Gateway, SectionName: fmt.Sprint(port), Protocol: table.HTTPProtocolType,
			VirtualHosts: []*engine.VirtualHost{{Name: ln + "/vhost/*", Rules: []*engine.RouteRule{rule}}},
		}}})
	}
	return g
}

// podName is <deployment>-<10 chars>-<5 chars>, stable for a Deployment
// (by uid) and replica, and distinct for its replicas. Each part is the
// low-order base-36 digits of an FNV-1a hash: inputs that differ in their
// last byte (replica 0 and 1) differ there, while the leading digits,
// used before, were equal for almost half the Deployments' replica pairs,
// which then had one Pod for two replicas.
func podName(d *appsv1.Deployment, replica int) string {
	hash := func(s string, n int) string {
		h := fnv.New64a()
		h.Write([]byte(s))
		v := strconv.FormatUint(h.Sum64(), 36)
		for len(v) < n {
			v = "0" + v
		}
		return v[len(v)-n:]
	}
	return d.Name + "-" + hash(string(d.UID), 10) + "-" + hash(string(d.UID)+"/"+strconv.Itoa(replica), 5)
}

// ensurePod creates Deployment d's Pod name unless it exists, and returns
// the Pod to start (runPod): the one it created, or one that exists and
// is not running (a start that failed); nil when it runs or is being
// deleted.
func (k *kubelet) ensurePod(ctx context.Context, d *appsv1.Deployment, name string, existing *corev1.PodList) (*corev1.Pod, error) {
	for i := range existing.Items {
		if p := &existing.Items[i]; p.Namespace == d.Namespace && p.Name == name {
			if p.Status.Phase == corev1.PodRunning || p.DeletionTimestamp != nil {
				return nil, nil
			}
			return p.DeepCopy(), nil
		}
	}
	lbls := map[string]string{"pod-template-hash": strings.Split(strings.TrimPrefix(name, d.Name+"-"), "-")[0]}
	for key, v := range d.Spec.Template.Labels {
		lbls[key] = v
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: d.Namespace, Labels: lbls, Annotations: d.Spec.Template.Annotations,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: new(true)}},
		},
		Spec: *d.Spec.Template.Spec.DeepCopy(),
	}
	pod.Spec.NodeName = "gwdev"
	at := k.clock()
	if err := k.api.Create(ctx, pod); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil, nil // started by the pass that lists it
		}
		return nil, fmt.Errorf("creating Pod %s/%s: %w", d.Namespace, name, err)
	}
	if k.created == nil {
		k.created = map[string]time.Time{}
	}
	k.created[pod.Namespace+"/"+pod.Name] = at
	return pod, nil
}

// runPod starts pod's containers and marks it running and Ready.
func (k *kubelet) runPod(ctx context.Context, pod *corev1.Pod) error {
	ip := k.podIP(slices.ContainsFunc(pod.Spec.Containers, isEchoAdvanced))
	pod.Status.PodIP = ip
	// The containers run before the Pod is Ready, so its endpoints answer
	// once they are published.
	if err := k.startContainers(ctx, pod); err != nil {
		return err // started again by the next pass
	}
	status := corev1.PodStatus{
		Phase:  corev1.PodRunning,
		HostIP: "127.0.0.1", PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		StartTime: &pod.CreationTimestamp,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue},
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue},
			{Type: corev1.PodReady, Status: corev1.ConditionTrue},
		},
	}
	for _, c := range pod.Spec.Containers {
		status.ContainerStatuses = append(status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: true, Started: new(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: pod.CreationTimestamp}},
		})
	}
	pod.Status = status
	if err := k.api.Status().Update(ctx, pod); err != nil {
		k.stopContainers(pod.Namespace + "/" + pod.Name)
		return fmt.Errorf("marking Pod %s/%s ready: %w", pod.Namespace, pod.Name, err)
	}
	return nil
}

// startContainers runs the echo-basic containers of pod.
func (k *kubelet) startContainers(ctx context.Context, pod *corev1.Pod) error {
	if k.t == nil {
		return nil
	}
	key := pod.Namespace + "/" + pod.Name
	k.stopContainers(key)
	var started []*container
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if !isEchoBasic(*c) {
			continue
		}
		ct, err := startContainer(ctx, k.t, k.api, pod, c)
		if err != nil {
			for _, s := range started {
				s.stop()
			}
			return err
		}
		started = append(started, ct)
	}
	k.mu.Lock()
	if k.containers == nil {
		k.containers = map[string][]*container{}
	}
	k.containers[key] = started
	k.mu.Unlock()
	return nil
}

// stopContainers stops the containers of Pod key ("namespace/name").
func (k *kubelet) stopContainers(key string) {
	k.mu.Lock()
	cs := k.containers[key]
	delete(k.containers, key)
	k.mu.Unlock()
	for _, c := range cs {
		c.stop()
	}
}

// stopAll stops every container (the run ended).
func (k *kubelet) stopAll() {
	k.mu.Lock()
	keys := make([]string, 0, len(k.containers))
	for key := range k.containers {
		keys = append(keys, key)
	}
	k.mu.Unlock()
	for _, key := range keys {
		k.stopContainers(key)
	}
}

// containerLogs returns the log lines, logged at or after since, of
// container name of the Pods in ns labelled app=<name>; ok is false when
// no such Pod runs an echo-basic container.
func (k *kubelet) containerLogs(ctx context.Context, ns, name string, since time.Time) (lines []string, ok bool, err error) {
	var pods corev1.PodList
	if err := k.api.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": name}); err != nil {
		return nil, false, err
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, p := range pods.Items {
		for _, c := range k.containers[p.Namespace+"/"+p.Name] {
			if c.name == name {
				ok = true
				lines = append(lines, c.log.Since(since)...)
			}
		}
	}
	return lines, ok, nil
}

// newClientset returns the client-go clientset the suite reads pod logs
// with. The suite asks for the logs of container <app> of every Pod labelled
// app=<app> (DumpEchoLogs); the log of such a Pod is what its echo-basic
// process wrote (or, for the mesh echo played by gwdev, what gwdev's echo
// backend logged for the Services selecting it).
//
// The fake clientset does not pass the Pod's name to reactors, so the logs
// of all the replicas are given once per DumpEchoLogs call:
// that call reads every Pod with the same *PodLogOptions, and a repeat of
// options already served gets an empty log (otherwise a Deployment with two
// replicas would count every line twice).
func newClientset(api client.Client, srv *emulator.Server, kube *kubelet) *k8sfake.Clientset {
	cs := k8sfake.NewClientset()
	var mu sync.Mutex
	served := map[*corev1.PodLogOptions]bool{}
	cs.PrependReactor("get", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		if action.GetSubresource() != "log" {
			return false, nil, nil
		}
		ga, ok := action.(k8stesting.GenericAction)
		if !ok {
			return false, nil, nil
		}
		opts, _ := ga.GetValue().(*corev1.PodLogOptions)
		if opts == nil || opts.Container == "" {
			return true, nil, fmt.Errorf("gwdev harness: pod logs need a container name")
		}
		mu.Lock()
		repeat := served[opts]
		if len(served) > 1000 {
			clear(served)
		}
		served[opts] = true
		mu.Unlock()
		if repeat {
			return true, &runtime.Unknown{Raw: nil}, nil
		}
		var since time.Time
		if opts.SinceTime != nil {
			since = opts.SinceTime.Time
		}
		lines, ok, err := kube.containerLogs(context.Background(), action.GetNamespace(), opts.Container, since)
		if err == nil && !ok {
			lines, err = echoLogs(context.Background(), api, srv, action.GetNamespace(), opts.Container, since)
		}
		if err != nil {
			return true, nil, err
		}
		return true, &runtime.Unknown{Raw: []byte(strings.Join(lines, "\n"))}, nil
	})
	return cs
}

// echoLogs returns the echo log lines, logged at or after since (all: zero
// since), of every Service in ns that selects a Pod labelled app=<app>.
func echoLogs(ctx context.Context, api client.Client, srv *emulator.Server, ns, app string, since time.Time) ([]string, error) {
	var pods corev1.PodList
	if err := api.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"app": app}); err != nil {
		return nil, err
	}
	var svcs corev1.ServiceList
	if err := api.List(ctx, &svcs, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	var lines []string
	for _, s := range svcs.Items {
		if len(s.Spec.Selector) == 0 {
			continue
		}
		sel := labels.SelectorFromSet(s.Spec.Selector)
		for _, p := range pods.Items {
			if sel.Matches(labels.Set(p.Labels)) {
				lines = append(lines, srv.EchoLogSince(s.Namespace+"/"+s.Name, since)...)
				break
			}
		}
	}
	return lines, nil
}
