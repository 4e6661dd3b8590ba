package watch

import (
	"slices"
	"testing"
)

// TestMetadataMistakesReportedOnceAtTheKey: an unquoted boolean label is
// one problem at the label's line, for Gateway API and core kinds alike,
// and the duplicate-listener CRD error names the listeners.
func TestMetadataMistakesReportedOnceAtTheKey(t *testing.T) {
	dir, lr := loadTree(t, map[string]string{"a.yaml": `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata:
  name: web
  labels:
    public: true
spec:
  gatewayClassName: gwdev
  listeners:
  - name: http
    protocol: HTTP
    port: 8080
  - name: http
    protocol: HTTP
    port: 8081
---
apiVersion: v1
kind: Service
metadata:
  name: svc
  labels:
    app: svc
    canary: yes
spec:
  ports: [{port: 80}]
`})
	got := problemStrings(dir, lr.Problems)
	want := []string{
		`a.yaml:6:5: Gateway/default/web: metadata.labels[public]: Invalid value: true: label values are strings, and YAML reads this unquoted value as a boolean (true, false, yes, no, on, off): quote it as written`,
		`a.yaml:9:3: Gateway/default/web: spec.listeners: Invalid value: Listener name must be unique within the Gateway (listeners[0] and listeners[1] have name "http")`,
		`a.yaml:13:5: Gateway/default/web: spec.listeners[1]: Duplicate value: {"name":"http"}`,
		`a.yaml:23:5: Service/default/svc: metadata.labels[canary]: Invalid value: true: label values are strings, and YAML reads this unquoted value as a boolean (true, false, yes, no, on, off): quote it as written`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems:\n%q\nwant\n%q", got, want)
	}
}
