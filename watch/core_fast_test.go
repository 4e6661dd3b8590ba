package watch

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestDecodeSimpleService checks the shortcut against strictDecode: what it
// accepts decodes identically, and what it declines is left untouched.
func TestDecodeSimpleService(t *testing.T) {
	svc := func(spec map[string]any) map[string]any {
		return map[string]any{
			"apiVersion": "v1", "kind": "Service",
			"metadata": map[string]any{"name": "web", "namespace": "apps", "labels": map[string]any{"app": "web"}},
			"spec":     spec,
		}
	}
	port := func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		name   string
		u      map[string]any
		simple bool
	}{
		{"ports", svc(map[string]any{"ports": []any{port("port", int64(80), "targetPort", int64(8080))}}), true},
		{"named target", svc(map[string]any{"ports": []any{port("name", "http", "port", int64(80), "targetPort", "http", "protocol", "TCP", "appProtocol", "kubernetes.io/h2c")}}), true},
		{"everything", svc(map[string]any{"type": "NodePort", "clusterIP": "10.0.0.1", "selector": map[string]any{"app": "web"},
			"ports": []any{port("port", int64(80), "nodePort", int64(30080))}}), true},
		{"external", svc(map[string]any{"type": "ExternalName", "externalName": "example.com"}), true},
		{"empty lists", svc(map[string]any{"ports": []any{}, "selector": map[string]any{}}), true},
		{"no spec", map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "x"}}, true},
		{"negative target", svc(map[string]any{"ports": []any{port("port", int64(80), "targetPort", int64(-1))}}), true},

		{"port too large", svc(map[string]any{"ports": []any{port("port", int64(1)<<40)}}), false},
		{"port as string", svc(map[string]any{"ports": []any{port("port", "80")}}), false},
		{"port as float", svc(map[string]any{"ports": []any{port("port", 80.5)}}), false},
		{"null port", svc(map[string]any{"ports": []any{port("port", nil)}}), false},
		{"unknown port field", svc(map[string]any{"ports": []any{port("port", int64(80), "prot", "TCP")}}), false},
		{"other spec field", svc(map[string]any{"sessionAffinity": "ClientIP"}), false},
		{"selector number", svc(map[string]any{"selector": map[string]any{"app": int64(1)}}), false},
		{"status", map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "x"}, "status": map[string]any{}}, false},
		{"unusual metadata", map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "x", "uid": "1"}}, false},
		{"ports not a list", svc(map[string]any{"ports": map[string]any{}}), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var fast corev1.Service
			if got := decodeSimpleService(c.u, &fast); got != c.simple {
				t.Fatalf("decodeSimpleService = %v, want %v", got, c.simple)
			}
			if !c.simple {
				if !reflect.DeepEqual(fast, corev1.Service{}) {
					t.Fatalf("declined but wrote %+v", fast)
				}
				return
			}
			var slow corev1.Service
			if is := strictDecode("", c.u, &slow); len(is) > 0 {
				t.Fatalf("strictDecode: %v", is)
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("shortcut:\n%+v\nstrictDecode:\n%+v", fast, slow)
			}
		})
	}
}
