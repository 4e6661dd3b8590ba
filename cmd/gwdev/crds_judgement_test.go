package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/gwdev/gwdev/internal/project"
)

// TestDashboardProblemsJudgeLikeCheck: the dashboard's Problems view, fed
// by up's reloader, judges the default-gateway sample as check does (issue
// 25: one judgement for check, diff and the dashboard). With --crds
// v1.6.3-standard the two experimental fields are errors, explained as
// fields the cluster drops (Problem.Pruned); without --crds they load and
// the channel notes say that a standard cluster lacks them.
func TestDashboardProblemsJudgeLikeCheck(t *testing.T) {
	dir := "../../samples/default-gateway"
	for _, tc := range []struct {
		crds string
		// both is what check and the Problems view say; view only the view.
		both, view []string
	}{
		{"v1.6.3-standard", []string{
			`unknown field "spec.useDefaultGateways" in v1.6.3-standard: rejected by kubectl's strict field validation`,
			`unknown field "spec.defaultScope" in v1.6.3-standard: rejected by kubectl's strict field validation`,
		}, []string{"✗ 2 errors", "the cluster drops the field. gwdev serves the object without it"}},
		{"", []string{
			"experimental channel only: v1.7.0-standard does not have field spec.useDefaultGateways",
			"experimental channel only: v1.7.0-standard does not have field spec.defaultScope",
		}, []string{"✓ no problems"}},
	} {
		model := dashboardWith(t, dir, project.Flags{CRDs: tc.crds})
		model.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("3")})
		v := model.View()
		for _, w := range append(tc.both, tc.view...) {
			if !strings.Contains(v, w) {
				t.Errorf("--crds %q: the Problems view lacks %q:\n%s", tc.crds, w, v)
			}
		}
		out, _, _ := runGwdev(t, "", "check", "--crds="+tc.crds, dir)
		for _, w := range tc.both {
			if !strings.Contains(out, w) {
				t.Errorf("--crds %q: check does not say %q:\n%s", tc.crds, w, out)
			}
		}
	}
}

// TestGraphAndCertsJudgeAgainstCRDs: graph and certs load through the same
// judgement as check. Under v1.5.1-standard the tcp-udp sample's routes
// are not served, so the graph has no route and says why on stderr; under
// v1.4.1-standard a ListenerSet is not served, so certs makes no
// certificate for its HTTPS listener and says why.
func TestGraphAndCertsJudgeAgainstCRDs(t *testing.T) {
	sample := "../../samples/tcp-udp"
	out, _, code := runGwdev(t, "", "graph", sample)
	if code != 0 || !strings.Contains(out, "TCPRoute default/echo") {
		t.Errorf("graph: exit %d, want the TCPRoute:\n%s", code, out)
	}
	out, errOut, _ := runGwdev(t, "", "graph", "--crds", "v1.5.1-standard", sample)
	if strings.Contains(out, "TCPRoute default/echo") || !strings.Contains(errOut, `no matches for kind "TCPRoute" in version "gateway.networking.k8s.io/v1" (v1.5.1-standard does not serve it`) {
		t.Errorf("graph --crds v1.5.1-standard: want no TCPRoute and the reason:\n%s%s", out, errOut)
	}

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "listenerset.yaml"), `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: edge}
spec:
  gatewayClassName: gwdev
  allowedListeners: {namespaces: {from: Same}}
  listeners: [{name: http, protocol: HTTP, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: ListenerSet
metadata: {name: shop}
spec:
  parentRef: {name: edge}
  listeners:
  - {name: https, protocol: HTTPS, port: 8443, hostname: shop.example.com, tls: {mode: Terminate, certificateRefs: [{name: shop-tls}]}}
`)
	ca := t.TempDir()
	for _, tc := range []struct{ crds, want string }{
		{"", "Secret default/shop-tls for shop.example.com"},
		{"v1.4.1-standard", `no matches for kind "ListenerSet" in version "gateway.networking.k8s.io/v1" (v1.4.1-standard does not serve it`},
	} {
		certs := filepath.Join(t.TempDir(), "certs.yaml")
		out, errOut, code := runGwdev(t, "", "certs", "--crds="+tc.crds, "--ca-dir", ca, "--out", certs, dir)
		_, statErr := os.Stat(certs)
		if code != 0 || !strings.Contains(out+errOut, tc.want) || (statErr == nil) != (tc.crds == "") {
			t.Errorf("certs --crds=%s: exit %d, wrote a file: %v; want %q:\n%s%s", tc.crds, code, statErr == nil, tc.want, out, errOut)
		}
	}
}
