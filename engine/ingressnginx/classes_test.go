package ingressnginx_test

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/ingressnginx"
)

// TestClassName: spec.ingressClassName wins over the deprecated annotation,
// which counts when the field is absent.
func TestClassName(t *testing.T) {
	name := func(s string) *string { return &s }
	for _, c := range []struct {
		field *string
		ann   string
		want  string
	}{
		{nil, "", ""},
		{nil, "legacy", "legacy"},
		{name("nginx"), "", "nginx"},
		{name("nginx"), "legacy", "nginx"},
	} {
		ing := &networkingv1.Ingress{Spec: networkingv1.IngressSpec{IngressClassName: c.field}}
		if c.ann != "" {
			ing.Annotations = map[string]string{ingressnginx.ClassAnnotation: c.ann}
		}
		if got := ingressnginx.ClassName(ing); got != c.want {
			t.Errorf("ClassName(field %v, annotation %q) = %q, want %q", c.field != nil, c.ann, got, c.want)
		}
	}
}

// TestRegisteredOnce: the package registers its front end at init, and a
// second registration under the same name panics, as a second profile does.
func TestRegisteredOnce(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a second RegisterFrontEnd of ingress-nginx did not panic")
		}
	}()
	engine.RegisterFrontEnd(ingressnginx.FrontEnd{})
}
