package conformance

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

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
)

// kubelet stands in for the Deployment controller and the kubelet: every
// Deployment gets its replicas as Ready Pods with a loopback pod IP (nothing
// is ever sent to it by gwdev, which answers Services without
// EndpointSlices with its built-in echo backend), and Pods whose Deployment
// is gone are deleted. Pod names are shaped like a ReplicaSet's
// (<deployment>-<hash>-<hash>), which the weight tests rely on.
type kubelet struct {
	api    *apiServer
	nextIP int
}

// podIP returns the next pod IP: 127.1.0.1, 127.1.0.2, … (loopback, so
// that nothing could ever leave the machine).
func (k *kubelet) podIP() string {
	k.nextIP++
	return fmt.Sprintf("127.1.%d.%d", k.nextIP/250, k.nextIP%250+1)
}

func (k *kubelet) reconcile(ctx context.Context) error {
	var deps appsv1.DeploymentList
	if err := k.api.List(ctx, &deps); err != nil {
		return fmt.Errorf("listing Deployments: %w", err)
	}
	var pods corev1.PodList
	if err := k.api.List(ctx, &pods); err != nil {
		return fmt.Errorf("listing Pods: %w", err)
	}
	want := map[string]bool{}
	for i := range deps.Items {
		d := &deps.Items[i]
		replicas := 1
		if d.Spec.Replicas != nil {
			replicas = int(*d.Spec.Replicas)
		}
		for r := range replicas {
			name := podName(d, r)
			want[d.Namespace+"/"+name] = true
			if err := k.ensurePod(ctx, d, name, &pods); err != nil {
				return err
			}
		}
	}
	for i := range pods.Items {
		p := &pods.Items[i]
		if want[p.Namespace+"/"+p.Name] {
			continue
		}
		if err := k.api.Delete(ctx, p); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting Pod %s/%s: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}

// podName is <deployment>-<10 chars>-<5 chars>, stable for a Deployment
// (by uid) and replica.
func podName(d *appsv1.Deployment, replica int) string {
	hash := func(s string, n int) string {
		h := fnv.New64a()
		h.Write([]byte(s))
		v := strconv.FormatUint(h.Sum64(), 36)
		for len(v) < n {
			v = "0" + v
		}
		return v[:n]
	}
	return d.Name + "-" + hash(string(d.UID), 10) + "-" + hash(string(d.UID)+"/"+strconv.Itoa(replica), 5)
}

func (k *kubelet) ensurePod(ctx context.Context, d *appsv1.Deployment, name string, existing *corev1.PodList) error {
	for _, p := range existing.Items {
		if p.Namespace == d.Namespace && p.Name == name {
			return nil
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
	if err := k.api.Create(ctx, pod); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		return fmt.Errorf("creating Pod %s/%s: %w", d.Namespace, name, err)
	}
	ip := k.podIP()
	pod.Status = corev1.PodStatus{
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
		pod.Status.ContainerStatuses = append(pod.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: true, Started: new(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: pod.CreationTimestamp}},
		})
	}
	if err := k.api.Status().Update(ctx, pod); err != nil {
		return fmt.Errorf("marking Pod %s/%s ready: %w", d.Namespace, name, err)
	}
	return nil
}

// newClientset returns the client-go clientset the suite reads pod logs
// with. The suite asks for the logs of container <app> of every Pod labelled
// app=<app> (DumpEchoLogs); the log of such a Pod is what gwdev's echo
// backend logged for the Services selecting it.
func newClientset(api client.Client, srv *emulator.Server) *k8sfake.Clientset {
	cs := k8sfake.NewClientset()
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
		lines, err := echoLogs(context.Background(), api, srv, action.GetNamespace(), opts.Container)
		if err != nil {
			return true, nil, err
		}
		return true, &runtime.Unknown{Raw: []byte(strings.Join(lines, "\n"))}, nil
	})
	return cs
}

// echoLogs returns the echo log lines of every Service in ns that selects
// a Pod labelled app=<app>.
func echoLogs(ctx context.Context, api client.Client, srv *emulator.Server, ns, app string) ([]string, error) {
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
				lines = append(lines, srv.EchoLog(s.Namespace+"/"+s.Name)...)
				break
			}
		}
	}
	return lines, nil
}
