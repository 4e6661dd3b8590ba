package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/gwdev/gwdev/engine"
)

// TestGoldenGraph runs the dashboard (teatest) on the conflicts, shadowed
// and backend-tls (policies) samples, switches to the Graph view (6), moves and filters, and
// compares the final frame with testdata/TestGoldenGraph/<case>.golden.
// Regenerate with: go test ./tui -run TestGoldenGraph -update
func TestGoldenGraph(t *testing.T) {
	cases := []struct {
		name, sample string
		keys         []string
		w, h         int
	}{
		{"conflicts", "conflicts", []string{"6"}, 100, 24},
		{"shadowed", "shadowed", []string{"6", "j", "j", "j"}, 100, 24},
		{"shadowed_narrow", "shadowed", []string{"6"}, 60, 16},
		{"shadowed_filter", "shadowed", []string{"6", "/", "c", "a", "n", "a", "r", "y", "enter"}, 100, 24},
		{"policies", "backend-tls", []string{"6", "G"}, 100, 24},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newTestModel(c.w, c.h, Options{})
			tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(c.w, c.h))
			tm.Send(sampleState(t, c.sample))
			for _, k := range c.keys {
				tm.Send(keyMsg(k))
			}
			if err := tm.Quit(); err != nil {
				t.Fatal(err)
			}
			fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second))
			teatest.RequireEqualOutput(t, []byte(fm.View()))
		})
	}
}

// TestGraphViewTree checks the tree's content and that Enter opens the
// selected node's object in Detail.
func TestGraphViewTree(t *testing.T) {
	m := newTestModel(140, 40, Options{})
	run(m, sampleState(t, "shadowed"))
	press(m, "6")
	if m.active != viewGraph {
		t.Fatalf("6: active view %d", m.active)
	}
	v := m.views[viewGraph].(*graphView)
	var got []string
	for _, i := range v.shown {
		l := v.lines[i]
		got = append(got, fmt.Sprintf("%d %s", l.depth, l.node.Label))
	}
	want := []string{"0 Gateway default/shop", "1 listener http", "2 HTTPRoute default/cart", "3 rule 0", "4 Service default/cart:80",
		"2 HTTPRoute default/search", "3 rule 0 api", "4 Service default/search:80", "3 rule 1 canary", "4 Service default/search-canary:80"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tree:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if view := m.View(); !strings.Contains(view, "rule 0 api  PathPrefix /api  ✗ shadowed") {
		t.Errorf("the shadowed rule is not marked:\n%s", view)
	}
	press(m, "j", "j", "j", "j", "j", "j", "enter") // rule 0 api → its route
	if m.active != viewDetail || !strings.Contains(m.View(), "name: search") {
		t.Errorf("enter on a rule does not open its route in Detail (view %d):\n%s", m.active, m.View())
	}
}

// TestDetailPolicies: the Detail view of a Service lists the
// BackendTLSPolicy that applies to it.
func TestDetailPolicies(t *testing.T) {
	m := newTestModel(160, 40, Options{})
	run(m, sampleState(t, "backend-tls"))
	run(m, showObjectMsg{key: engine.ObjectKey{Kind: "Service", Namespace: "default", Name: "secure-app"}})
	view := m.View()
	if !strings.Contains(view, "Policies:") || !strings.Contains(view, "✓ BackendTLSPolicy default/secure-app  Accepted: TLS to the backends, SNI app.internal") {
		t.Errorf("Detail of Service secure-app lacks its policy:\n%s", view)
	}
	run(m, showObjectMsg{key: engine.ObjectKey{Kind: "Gateway", Namespace: "default", Name: "web"}})
	if strings.Contains(m.View(), "Policies:") {
		t.Errorf("Detail of a Gateway no policy targets shows Policies:\n%s", m.View())
	}
}

// TestGraphViewPolicy: a policy is a line of its own in the tree, after
// the Gateways, with its target under it, and Enter on it opens the
// policy in Detail.
func TestGraphViewPolicy(t *testing.T) {
	m := newTestModel(140, 40, Options{})
	run(m, sampleState(t, "backend-tls"))
	press(m, "6", "G", "k", "enter") // the last policy, above its Service
	if m.active != viewDetail || !strings.Contains(m.View(), "kind: BackendTLSPolicy") || !strings.Contains(m.View(), "name: wrong-ca") {
		t.Errorf("enter on a policy does not open it in Detail (view %d):\n%s", m.active, m.View())
	}
}
