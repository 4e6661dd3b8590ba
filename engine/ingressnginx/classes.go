package ingressnginx

import (
	"cmp"
	"slices"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/gwdev/gwdev/engine"
)

// This file decides which Ingresses gwdev serves and writes their status;
// nginx.go turns them into the routing table as ingress-nginx would
// configure nginx, and annotations.go lists its annotations.

// Controller is ingress-nginx's controller name: the
// IngressClass spec.controller gwdev emulates.
const Controller = "k8s.io/ingress-nginx"

// Annotations naming an Ingress's class and the default IngressClass.
const (
	ClassAnnotation   = "kubernetes.io/ingress.class"
	DefaultClassLabel = "ingressclass.kubernetes.io/is-default-class"
)

// ingressClass is one class gwdev serves as ingress-nginx: an IngressClass of
// the manifests whose controller is ingress-nginx, or a class Ingresses name
// that the manifests do not hold (gwdev then acts as its controller, as it
// does for GatewayClasses).
type ingressClass struct {
	name string
	// obj is the IngressClass (nil: not in the manifests).
	obj       *networkingv1.IngressClass
	ingresses []*ingressState
	// addr is the loopback address the class's listeners bind.
	addr string
}

// ingressState is one Ingress served by a class.
type ingressState struct {
	key   engine.ObjectKey
	obj   *networkingv1.Ingress
	class *ingressClass
	ann   ingressAnnotations
}

// ClassName is the class an Ingress names: spec.ingressClassName, else
// the kubernetes.io/ingress.class annotation; "" when it names none (the
// default IngressClass then applies, if exactly one is marked default).
func ClassName(ing *networkingv1.Ingress) string {
	if ing.Spec.IngressClassName != nil {
		return *ing.Spec.IngressClassName
	}
	return ing.Annotations[ClassAnnotation]
}

// ingressAddressKey is the key of a class's address
// (Translation.LoopbackAddresses): it cannot clash with a Gateway's
// "<ns>/<name>" or a mesh frontend's "mesh:…".
func ingressAddressKey(class string) string { return "ingress:" + class }

// processIngresses picks the class of every Ingress (spec.ingressClassName,
// else the kubernetes.io/ingress.class annotation, else the default
// IngressClass) and keeps those of ingress-nginx classes, oldest first (the
// order in which ingress-nginx merges them). The others are noted.
func (t *translator) processIngresses() {
	byName := map[string]*networkingv1.IngressClass{}
	var defaults []*networkingv1.IngressClass
	for _, c := range t.tr.Output().IngressClasses {
		byName[c.Name] = c
		if c.Annotations[DefaultClassLabel] == "true" {
			defaults = append(defaults, c)
		}
	}
	classes := map[string]*ingressClass{}
	for _, ing := range t.tr.Output().Ingresses {
		key := engine.ObjectKey{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}
		name := ClassName(ing)
		if name == "" {
			switch len(defaults) {
			case 0:
				t.note(engine.SeverityWarning, key, "", "the Ingress names no class and no IngressClass is marked default ("+DefaultClassLabel+
					": \"true\"); ingress-nginx ignores it (unless started with --watch-ingress-without-class), and so does gwdev")
				continue
			case 1:
				name = defaults[0].Name
			default:
				t.note(engine.SeverityWarning, key, "", "the Ingress names no class and several IngressClasses are marked default; the apiserver refuses to create it")
				continue
			}
		}
		obj := byName[name]
		if obj != nil && obj.Spec.Controller != Controller {
			t.note(engine.SeverityInfo, key, "", "IngressClass "+name+" is for controller "+obj.Spec.Controller+", not "+Controller+": not served")
			continue
		}
		c := classes[name]
		if c == nil {
			c = &ingressClass{name: name, obj: obj}
			classes[name] = c
			if obj == nil {
				t.note(engine.SeverityInfo, key, "", "IngressClass "+name+" is not in the manifests: gwdev serves it as "+Controller)
			}
		}
		st := &ingressState{key: key, obj: ing, class: c}
		st.ann = t.parseIngressAnnotations(st)
		c.ingresses = append(c.ingresses, st)
	}
	for _, c := range classes {
		slices.SortStableFunc(c.ingresses, func(a, b *ingressState) int { return engine.CompareOlder(a.obj, b.obj) })
		t.ingressClasses = append(t.ingressClasses, c)
	}
	slices.SortFunc(t.ingressClasses, func(a, b *ingressClass) int { return cmp.Compare(a.name, b.name) })
}

// assignIngressAddresses gives each class a loopback address from
// 127.0.20.1 on, away from the Gateways' and the mesh's: the one it had in
// the previous translation when still free, else the next free one.
func (t *translator) assignIngressAddresses() {
	keys := make([]string, len(t.ingressClasses))
	for i, c := range t.ingressClasses {
		keys[i] = ingressAddressKey(c.name)
	}
	for i, a := range t.tr.LoopbackAddresses(keys, 20*254+1) { // 127.0.20.1
		t.ingressClasses[i].addr = a
	}
}

// writeIngressStatus sets status.loadBalancer of every served Ingress to its
// class's address, as ingress-nginx publishes its Service's address.
func (t *translator) writeIngressStatus() {
	for _, c := range t.ingressClasses {
		for _, st := range c.ingresses {
			st.obj.Status = networkingv1.IngressStatus{LoadBalancer: networkingv1.IngressLoadBalancerStatus{
				Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: c.addr}},
			}}
		}
	}
}
