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

// reconcileHeadless stands in for the EndpointSlice controller, for
// headless Services with a selector only: it writes one EndpointSlice per
// such Service listing the Ready Pods it selects.
//
// gwdev's echo backend stands in for a ClusterIP Service's Pods, which is
// why the harness does not run the controller for every Service. A headless
// Service has no virtual IP: its Pods are reached only through the
// endpoints the controller publishes, and a test of one (HTTPRouteService
// Types "headless") expects the answer of a selected Pod. With these slices
// gwdev routes to the Pod IPs, where the Pods' echo containers answer
// (serveWorkloads).
func (k *kubelet) reconcileHeadless(ctx context.Context, running []corev1.Pod) error {
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
		if s.Spec.ClusterIP != corev1.ClusterIPNone || len(s.Spec.Selector) == 0 {
			continue
		}
		es := headlessSlice(s, running)
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

// headlessSlice is the EndpointSlice of Service s: its ports (numeric
// target ports) and the running Pods it selects, by name.
func headlessSlice(s *corev1.Service, running []corev1.Pod) *discoveryv1.EndpointSlice {
	es := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name: s.Name + "-gwdev", Namespace: s.Namespace,
			Labels: map[string]string{discoveryv1.LabelServiceName: s.Name, discoveryv1.LabelManagedBy: endpointsManagedBy},
		},
		AddressType: discoveryv1.AddressTypeIPv4,
	}
	for _, p := range s.Spec.Ports {
		port := p.TargetPort.IntVal
		if p.TargetPort.Type == intstr.String || port == 0 {
			port = p.Port
		}
		es.Ports = append(es.Ports, discoveryv1.EndpointPort{Name: new(p.Name), Protocol: new(p.Protocol), Port: new(port)})
	}
	sel := labels.SelectorFromSet(s.Spec.Selector)
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
