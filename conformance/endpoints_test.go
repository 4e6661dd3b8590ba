package conformance

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// endpointsManagedBy marks the EndpointSlices the harness writes, as the
// EndpointSlice controller marks its own.
const endpointsManagedBy = "gwdev-conformance-harness"

// reconcileEndpoints stands in for the EndpointSlice controller: it writes
// one EndpointSlice per Service with a selector listing the Ready Pods it
// selects, so gwdev forwards to the Pods' addresses as it forwards to a
// user's backends in a cluster (containers_test.go runs the Pods'
// echo-basic containers there).
//
// The exception: a Service that is not headless and selects Pods of the
// mesh echo image (echo-advanced) gets none, and gwdev's echo backend
// answers for it, as before: the harness has no echo-advanced program, and
// the mesh tests parse the answer of the mesh client (meshclient_test.go).
func (k *kubelet) reconcileEndpoints(ctx context.Context, running []corev1.Pod) error {
	var svcs corev1.ServiceList
	if err := k.api.List(ctx, &svcs); err != nil {
		return fmt.Errorf("listing Services: %w", err)
	}
	var have discoveryv1.EndpointSliceList
	if err := k.api.List(ctx, &have); err != nil {
		return fmt.Errorf("listing EndpointSlices: %w", err)
	}
	want := map[string]*discoveryv1.EndpointSlice{}
	for i := range svcs.Items {
		s := &svcs.Items[i]
		if len(s.Spec.Selector) == 0 || (s.Spec.ClusterIP != corev1.ClusterIPNone && selectsMesh(s, running)) {
			continue
		}
		es := serviceSlice(s, running)
		want[es.Namespace+"/"+es.Name] = es
	}
	for i := range have.Items {
		es := &have.Items[i]
		if es.Labels[discoveryv1.LabelManagedBy] != endpointsManagedBy {
			continue
		}
		w := want[es.Namespace+"/"+es.Name]
		delete(want, es.Namespace+"/"+es.Name)
		switch {
		case w == nil:
			if err := k.api.Delete(ctx, es); err != nil && !apierrors.IsNotFound(err) {
				return fmt.Errorf("deleting EndpointSlice %s/%s: %w", es.Namespace, es.Name, err)
			}
		case !reflect.DeepEqual(w.Endpoints, es.Endpoints) || !reflect.DeepEqual(w.Ports, es.Ports):
			es.Endpoints, es.Ports = w.Endpoints, w.Ports
			if err := k.api.Update(ctx, es); err != nil {
				return fmt.Errorf("updating EndpointSlice %s/%s: %w", es.Namespace, es.Name, err)
			}
		}
	}
	keys := make([]string, 0, len(want))
	for key := range want {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		if err := k.api.Create(ctx, want[key]); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating EndpointSlice %s: %w", key, err)
		}
	}
	return nil
}

// selectsMesh reports whether s selects a running Pod of the mesh echo
// image.
func selectsMesh(s *corev1.Service, running []corev1.Pod) bool {
	sel := labels.SelectorFromSet(s.Spec.Selector)
	for _, p := range running {
		if p.Namespace == s.Namespace && sel.Matches(labels.Set(p.Labels)) && slices.ContainsFunc(p.Spec.Containers, isEchoAdvanced) {
			return true
		}
	}
	return false
}

// serviceSlice is the EndpointSlice of Service s: its ports (target
// ports; a named one resolved in the selected Pods' containers) and the
// running Pods it selects, by name.
func serviceSlice(s *corev1.Service, running []corev1.Pod) *discoveryv1.EndpointSlice {
	es := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: s.Name + "-gwdev", Namespace: s.Namespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: s.Name, discoveryv1.LabelManagedBy: endpointsManagedBy},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	sel := labels.SelectorFromSet(s.Spec.Selector)
	for _, p := range s.Spec.Ports {
		port := p.TargetPort.IntVal
		if p.TargetPort.Type == intstr.String {
			port = namedPort(s, sel, running, p.TargetPort.StrVal)
		}
		if port == 0 {
			port = p.Port
		}
		es.Ports = append(es.Ports, discoveryv1.EndpointPort{Name: new(p.Name), Protocol: new(p.Protocol), Port: new(port)})
	}
	pods := slices.Clone(running)
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	for _, p := range pods {
		if p.Namespace != s.Namespace || p.Status.PodIP == "" || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		es.Endpoints = append(es.Endpoints, discoveryv1.Endpoint{
			Addresses:  []string{p.Status.PodIP},
			Conditions: discoveryv1.EndpointConditions{Ready: new(true)},
			TargetRef:  &corev1.ObjectReference{Kind: "Pod", Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		})
	}
	return es
}

// namedPort is the container port called name in a Pod s selects (0: none).
func namedPort(s *corev1.Service, sel labels.Selector, running []corev1.Pod, name string) int32 {
	for _, p := range running {
		if p.Namespace != s.Namespace || !sel.Matches(labels.Set(p.Labels)) {
			continue
		}
		for _, c := range p.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == name {
					return cp.ContainerPort
				}
			}
		}
	}
	return 0
}
