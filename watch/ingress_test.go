package watch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

const ingressHeader = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop
spec:
  ingressClassName: nginx
`

// TestIngressValidation checks the apiserver's rules for Ingress and
// IngressClass (networking validation): each mistake is a problem at its
// line, naming the field, and the object is rejected.
func TestIngressValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		want []string
	}{
		{
			name: "neither rules nor default backend",
			yaml: ingressHeader,
			want: []string{"m.yaml:5:1: Ingress/default/shop: spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"},
		},
		{
			name: "Exact path with a double slash and a dot suffix",
			yaml: ingressHeader + `  rules:
  - http:
      paths:
      - path: /a//b/.
        pathType: Exact
        backend: {service: {name: web, port: {number: 80}}}
`,
			want: []string{
				`m.yaml:10:9: Ingress/default/shop: spec.rules[0].http.paths[0].path: Invalid value: "/a//b/.": cannot end with '/.'`,
				`m.yaml:10:9: Ingress/default/shop: spec.rules[0].http.paths[0].path: Invalid value: "/a//b/.": must not contain '//'`,
			},
		},
		{
			name: "Prefix path not absolute",
			yaml: ingressHeader + `  rules:
  - http:
      paths:
      - path: api
        pathType: Prefix
        backend: {service: {name: web, port: {number: 80}}}
`,
			want: []string{`m.yaml:10:9: Ingress/default/shop: spec.rules[0].http.paths[0].path: Invalid value: "api": must be an absolute path`},
		},
		{
			name: "ImplementationSpecific regex path is accepted, missing pathType is not",
			yaml: ingressHeader + `  rules:
  - http:
      paths:
      - path: /api(/|$)(.*)
        pathType: ImplementationSpecific
        backend: {service: {name: web, port: {number: 80}}}
      - path: /x
        backend: {service: {name: web, port: {number: 80}}}
`,
			want: []string{`m.yaml:13:9: Ingress/default/shop: spec.rules[0].http.paths[1].pathType: Required value: pathType must be specified`},
		},
		{
			name: "unknown pathType",
			yaml: ingressHeader + `  rules:
  - http:
      paths:
      - path: /x
        pathType: Regex
        backend: {service: {name: web, port: {number: 80}}}
`,
			want: []string{`m.yaml:11:9: Ingress/default/shop: spec.rules[0].http.paths[0].pathType: Unsupported value: "Regex": supported values: "Exact", "Prefix", "ImplementationSpecific"`},
		},
		{
			name: "IP host, bad service name, port name and number",
			yaml: ingressHeader + `  rules:
  - host: 10.0.0.1
    http:
      paths:
      - path: /
        pathType: Prefix
        backend: {service: {name: Web, port: {number: 80, name: http}}}
`,
			want: []string{
				`m.yaml:8:5: Ingress/default/shop: spec.rules[0].host: Invalid value: "10.0.0.1": must be a DNS name, not an IP address`,
				`m.yaml:13:29: Ingress/default/shop: spec.rules[0].http.paths[0].backend.service.name: Invalid value: "Web": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
				`m.yaml:13:40: Ingress/default/shop: spec.rules[0].http.paths[0].backend.service.port: Invalid value: {"name":"http","number":80}: cannot set both port name & port number`,
			},
		},
		{
			name: "class annotation and field together",
			yaml: `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop
  annotations:
    kubernetes.io/ingress.class: nginx
spec:
  ingressClassName: nginx
  defaultBackend: {service: {name: web, port: {number: 80}}}
`,
			want: []string{`m.yaml:6:5: Ingress/default/shop: metadata.annotations[kubernetes.io/ingress.class]: Invalid value: "nginx": can not be set when the class field is also set`},
		},
		{
			name: "IngressClass without controller",
			yaml: `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
spec: {}
`,
			want: []string{`m.yaml:5:1: IngressClass/nginx: spec.controller: Required value`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, r := loadTree(t, map[string]string{"m.yaml": tc.yaml})
			got := problemStrings(dir, r.Problems)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if n := len(snapshotObjects(r.Snapshot)); n != 0 {
				t.Errorf("rejected object is in the Snapshot (%d objects)", n)
			}
		})
	}
}

// TestIngressAccepted loads a valid Ingress and IngressClass: both are in
// the Snapshot with their apiVersion and kind, and the Ingress's status is
// left to the engine.
func TestIngressAccepted(t *testing.T) {
	_, r := loadTree(t, map[string]string{"m.yaml": `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata:
  name: nginx
  annotations:
    ingressclass.kubernetes.io/is-default-class: "true"
spec:
  controller: k8s.io/ingress-nginx
---
` + ingressHeader + `  tls:
  - hosts: [shop.example.com, "*.shop.example.com"]
    secretName: shop-tls
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend: {service: {name: web, port: {name: http}}}
status:
  loadBalancer:
    ingress: [{ip: 1.2.3.4}]
`})
	if len(r.Problems) != 0 {
		t.Fatalf("problems: %v", r.Problems)
	}
	s := r.Snapshot
	if len(s.Ingresses) != 1 || len(s.IngressClasses) != 1 {
		t.Fatalf("got %d Ingresses, %d IngressClasses; want 1, 1", len(s.Ingresses), len(s.IngressClasses))
	}
	ing := s.Ingresses[0]
	if ing.APIVersion != "networking.k8s.io/v1" || ing.Kind != "Ingress" {
		t.Errorf("type meta %s %s", ing.APIVersion, ing.Kind)
	}
	if len(ing.Status.LoadBalancer.Ingress) != 0 {
		t.Errorf("status from the manifest kept: %+v", ing.Status)
	}
}
