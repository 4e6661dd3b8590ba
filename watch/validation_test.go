package watch

import (
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const gatewayHeader = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: gw
spec:
  gatewayClassName: gwdev
  listeners:
`

// TestValidationProblems checks, for each kind of mistake, the exact
// problems (position, object, message) and that the object is rejected.
func TestValidationProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		yaml string
		want []string
	}{
		{
			name: "port below minimum",
			yaml: gatewayHeader + `  - name: http
    port: 0
    protocol: HTTP
`,
			want: []string{
				"m.yaml:9:5: Gateway/default/gw: spec.listeners[0].port: Invalid value: 0: should be greater than or equal to 1",
			},
		},
		{
			name: "port above maximum",
			yaml: gatewayHeader + `  - name: http
    port: 70000
    protocol: HTTP
`,
			want: []string{
				"m.yaml:9:5: Gateway/default/gw: spec.listeners[0].port: Invalid value: 70000: should be less than or equal to 65535",
			},
		},
		{
			name: "unknown field",
			yaml: gatewayHeader + `  - name: http
    port: 80
    protocol: HTTP
    colour: blue
`,
			want: []string{
				"m.yaml:11:5: Gateway/default/gw: unknown field \"spec.listeners[0].colour\"",
			},
		},
		{
			name: "missing required field",
			yaml: gatewayHeader + `  - name: http
    protocol: HTTP
`,
			want: []string{
				"m.yaml:1:1: Gateway/default/gw: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
				"m.yaml:8:5: Gateway/default/gw: spec.listeners[0].port: Required value",
			},
		},
		{
			name: "bad hostname pattern",
			yaml: gatewayHeader + `  - name: http
    port: 80
    protocol: HTTP
    hostname: Bad_Host
`,
			want: []string{
				"m.yaml:11:5: Gateway/default/gw: spec.listeners[0].hostname: Invalid value: \"Bad_Host\": should match '^(\\*\\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'",
			},
		},
		{
			name: "enum violation",
			yaml: `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: r
spec:
  rules:
  - matches:
    - path:
        type: Prefix
        value: /
`,
			want: []string{
				"m.yaml:1:1: HTTPRoute/default/r: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
				"m.yaml:9:9: HTTPRoute/default/r: spec.rules[0].matches[0].path.type: Unsupported value: \"Prefix\": supported values: \"Exact\", \"PathPrefix\", \"RegularExpression\"",
			},
		},
		{
			name: "TLS listener without tls (CEL)",
			yaml: gatewayHeader + `  - name: tls
    port: 443
    protocol: TLS
`,
			want: []string{
				"m.yaml:7:3: Gateway/default/gw: spec.listeners: Invalid value: tls mode must be set for protocol TLS",
			},
		},
		{
			name: "HTTP listener with tls (CEL)",
			yaml: gatewayHeader + `  - name: http
    port: 80
    protocol: HTTP
    tls:
      certificateRefs:
      - name: cert
`,
			want: []string{
				"m.yaml:7:3: Gateway/default/gw: spec.listeners: Invalid value: tls must not be specified for protocols ['HTTP', 'TCP', 'UDP']",
			},
		},
		{
			name: "duplicate listener names (CEL and list-map key)",
			yaml: gatewayHeader + `  - name: web
    port: 80
    protocol: HTTP
  - name: web
    port: 8080
    protocol: HTTP
`,
			want: []string{
				"m.yaml:7:3: Gateway/default/gw: spec.listeners: Invalid value: Listener name must be unique within the Gateway (listeners[0] and listeners[1] have name \"web\")",
				"m.yaml:11:5: Gateway/default/gw: spec.listeners[1]: Duplicate value: {\"name\":\"web\"}",
			},
		},
		{
			name: "missing name",
			yaml: `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  namespace: apps
spec: {}
`,
			want: []string{
				"m.yaml:3:1: HTTPRoute: metadata.name: Required value: name or generateName is required",
			},
		},
		{
			name: "invalid name",
			yaml: `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: My_Route
spec: {}
`,
			want: []string{
				"m.yaml:4:3: HTTPRoute/default/My_Route: metadata.name: Invalid value: \"My_Route\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
			},
		},
		{
			name: "missing apiVersion and kind",
			yaml: `metadata:
  name: x
`,
			want: []string{
				"m.yaml:1:1: apiVersion: Required value",
				"m.yaml:1:1: kind: Required value",
			},
		},
		{
			name: "service port out of range and unknown field",
			yaml: `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: 70000
  - name: b
    port: 81
    colour: red
`,
			want: []string{
				"m.yaml:10:5: Service/default/web: unknown field \"spec.ports[1].colour\"",
			},
		},
		{
			name: "service port out of range",
			yaml: `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - name: a
    port: 70000
  - name: b
    port: 0
    protocol: ICMP
`,
			want: []string{
				"m.yaml:8:5: Service/default/web: spec.ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
				"m.yaml:10:5: Service/default/web: spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive",
				"m.yaml:11:5: Service/default/web: spec.ports[1].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\"",
			},
		},
		{
			name: "tls secret without key",
			yaml: `apiVersion: v1
kind: Secret
metadata:
  name: cert
type: kubernetes.io/tls
data:
  tls.crt: Y2VydA==
`,
			want: []string{
				"m.yaml:6:1: Secret/default/cert: data[tls.key]: Required value",
			},
		},
		{
			name: "type mismatch in core kind",
			yaml: `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  ports:
  - port: eighty
`,
			want: []string{
				"m.yaml:7:5: Service/default/web: spec.ports.port: json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32",
			},
		},
		{
			name: "XBackendTrafficPolicy budget out of range (schema and CEL)",
			yaml: `apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackendTrafficPolicy
metadata:
  name: p
spec:
  targetRefs: [{group: "", kind: Service, name: svc}]
  retryConstraint:
    budget: {percent: 101, interval: 2h}
    minRetryRate: {count: 0, interval: 0s}
`,
			want: []string{
				"m.yaml:8:14: XBackendTrafficPolicy/default/p: spec.retryConstraint.budget.percent: Invalid value: 101: should be less than or equal to 100",
				`m.yaml:8:28: XBackendTrafficPolicy/default/p: spec.retryConstraint.budget.interval: Invalid value: "2h": interval cannot be greater than one hour or less than one second`,
				"m.yaml:9:20: XBackendTrafficPolicy/default/p: spec.retryConstraint.minRetryRate.count: Invalid value: 0: should be greater than or equal to 1",
				`m.yaml:9:30: XBackendTrafficPolicy/default/p: spec.retryConstraint.minRetryRate.interval: Invalid value: "0s": interval cannot be greater than one hour`,
			},
		},
		{
			// v1.6-shaped XBackend: port.port was renamed port.number in
			// v1.7.0 (the problem says so); port.name is gone (a plain
			// unknown field); a backendRef to an XBackend carries no port.
			name: "XBackend v1.6 shapes",
			yaml: `apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata:
  name: b
spec:
  type: ExternalHostname
  externalHostname: {hostname: api.example.com}
  port: {name: web, port: 8080}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: r
spec:
  rules:
  - backendRefs: [{group: gateway.networking.x-k8s.io, kind: XBackend, name: b, port: 8080}]
`,
			want: []string{
				"m.yaml:8:3: XBackend/default/b: spec.port: Invalid value: 0: should have at least 1 properties",
				`m.yaml:8:10: XBackend/default/b: unknown field "spec.port.name"`,
				`m.yaml:8:21: XBackend/default/b: unknown field "spec.port.port": Gateway API v1.7.0 renamed it to spec.port.number`,
				"m.yaml:16:19: HTTPRoute/default/r: spec.rules[0].backendRefs[0]: Invalid value: Must not have port for Backend reference",
			},
		},
		{
			// Listener filters only on HTTP and HTTPS listeners: the
			// Gateway CRD's rule, held for ListenerSets too (their v1.7.0
			// CRD lacks it).
			name: "listener filters on a TCP listener",
			yaml: `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  listeners:
  - name: tcp
    protocol: TCP
    port: 9000
    filters: {requests: [{type: ExtensionRef, extensionRef: {group: example.com, kind: JWT, name: jwt}}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: ext}
spec:
  parentRef: {name: gw}
  listeners:
  - name: tcp
    protocol: TCP
    port: 9001
    filters: {requests: [{type: ExtensionRef, extensionRef: {group: example.com, kind: JWT, name: jwt}}]}
`,
			want: []string{
				"m.yaml:7:5: Gateway/default/gw: spec.listeners[0]: Invalid value: filters may only be set when protocol is HTTP or HTTPS",
				"m.yaml:18:5: ListenerSet/default/ext: spec.listeners[0]: Invalid value: filters may only be set when protocol is HTTP or HTTPS (the Gateway's rule; the v1.7.0 ListenerSet CRD lacks it)",
			},
		},
		{
			// v1.6-shaped session persistence: sessionName and
			// cookieConfig moved in v1.7.0; the problems name the new fields.
			name: "sessionPersistence v1.6 shapes",
			yaml: `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata:
  name: r
spec:
  rules:
  - sessionPersistence:
      sessionName: cart
      cookieConfig: {lifetimeType: Session}
    backendRefs: [{name: svc, port: 80}]
  - sessionPersistence: {type: Header, sessionName: X-Session}
    backendRefs: [{name: svc, port: 80}]
`,
			want: []string{
				"m.yaml:7:5: HTTPRoute/default/r: spec.rules[0].sessionPersistence: Invalid value: cookie must be specified for Cookie type",
				`m.yaml:8:7: HTTPRoute/default/r: unknown field "spec.rules[0].sessionPersistence.sessionName": Gateway API v1.7.0 moved it to sessionPersistence.cookie.name (type Cookie) or sessionPersistence.header.name (type Header)`,
				`m.yaml:9:7: HTTPRoute/default/r: unknown field "spec.rules[0].sessionPersistence.cookieConfig": Gateway API v1.7.0 renamed it to sessionPersistence.cookie (with lifetimeType, name and path)`,
				"m.yaml:11:5: HTTPRoute/default/r: spec.rules[1].sessionPersistence: Invalid value: header must be specified for Header type",
				`m.yaml:11:40: HTTPRoute/default/r: unknown field "spec.rules[1].sessionPersistence.sessionName": Gateway API v1.7.0 moved it to sessionPersistence.cookie.name (type Cookie) or sessionPersistence.header.name (type Header)`,
			},
		},
		{
			name: "XBackend unknown field and cluster.local hostname",
			yaml: `apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XBackend
metadata:
  name: b
spec:
  type: ExternalHostname
  externalHostname: {hostname: svc.ns.svc.cluster.local}
  port: {number: 8080}
  colour: blue
`,
			want: []string{
				`m.yaml:7:22: XBackend/default/b: spec.externalHostname.hostname: Invalid value: "svc.ns.svc.cluster.local": hostname must not be an IP address or end with .cluster.local`,
				`m.yaml:9:3: XBackend/default/b: unknown field "spec.colour"`,
			},
		},
		{
			name: "duplicate field",
			yaml: `apiVersion: v1
kind: ConfigMap
metadata:
  name: c
data:
  a: "1"
data: {}
`,
			want: []string{
				"m.yaml:7:1: ConfigMap/c: duplicate field \"data\"",
			},
		},
		{
			name: "XMesh unknown field",
			yaml: `apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XMesh
metadata:
  name: gwdev
spec:
  controllerName: gwdev.dev/mesh-controller
  bogus: 1
`,
			want: []string{
				`m.yaml:7:3: XMesh/gwdev: unknown field "spec.bogus"`,
			},
		},
		{
			name: "XMesh controllerName not domain-prefixed",
			yaml: `apiVersion: gateway.networking.x-k8s.io/v1alpha1
kind: XMesh
metadata:
  name: gwdev
spec:
  controllerName: gwdev
`,
			want: []string{`m.yaml:6:3: XMesh/gwdev: spec.controllerName: Invalid value: "gwdev": should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/[A-Za-z0-9\/\-._~%!$&'()*+,;=:]+$'`},
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

// TestMetadataNotAnObject: a malformed metadata is one problem, not a crash.
func TestMetadataNotAnObject(t *testing.T) {
	for doc, want := range map[string]string{
		"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: oops\nspec: {}\n": "m.yaml:3:1: HTTPRoute: metadata: Invalid value: must be an object",
		"apiVersion: v1\nkind: Service\nmetadata: [1]\nspec: {ports: [{port: 80}]}\n":           "m.yaml:3:1: Service: metadata: Invalid value: must be an object",
	} {
		r := newTestLoader(t).LoadBytes("m.yaml", []byte(doc))
		if got := problemStrings("", r.Problems); len(got) != 1 || got[0] != want {
			t.Errorf("problems = %q, want %q", got, want)
		}
	}
}

// TestDecodeSimpleMetaMatchesStrictDecode checks the shortcut against the
// JSON round trip it replaces, and that it declines what it does not know.
func TestDecodeSimpleMetaMatchesStrictDecode(t *testing.T) {
	cases := []struct {
		meta   map[string]any
		simple bool
	}{
		{map[string]any{}, true},
		{map[string]any{"name": "a"}, true},
		{map[string]any{"name": "a", "namespace": "b", "labels": map[string]any{"x": "y"}, "annotations": map[string]any{"k": ""}}, true},
		{map[string]any{"name": "a", "labels": map[string]any{}}, true},
		{map[string]any{"name": "a", "labels": nil}, false},
		{map[string]any{"name": int64(1)}, false},
		{map[string]any{"name": "a", "labels": map[string]any{"x": int64(1)}}, false},
		{map[string]any{"name": "a", "labels": map[string]any{"x": nil}}, false},
		{map[string]any{"name": "a", "uid": "u"}, false},
		{map[string]any{"name": "a", "nmae": "typo"}, false},
	}
	for _, c := range cases {
		var fast metav1.ObjectMeta
		if got := decodeSimpleMeta(c.meta, &fast); got != c.simple {
			t.Errorf("decodeSimpleMeta(%v) = %v, want %v", c.meta, got, c.simple)
			continue
		}
		if !c.simple {
			if !reflect.DeepEqual(fast, metav1.ObjectMeta{}) {
				t.Errorf("decodeSimpleMeta(%v) declined but wrote %+v", c.meta, fast)
			}
			continue
		}
		var slow metav1.ObjectMeta
		if is := strictDecode("metadata", c.meta, &slow); len(is) > 0 {
			t.Fatalf("strictDecode(%v): %v", c.meta, is)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("metadata %v: shortcut %+v, strictDecode %+v", c.meta, fast, slow)
		}
	}
}
