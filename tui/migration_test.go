package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/ingressnginx"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/watch"
)

// migrationSample is a comparison as gwdev up sends it for
// samples/ingress-nginx: two differences, a converted manifest the CRDs
// refuse, one annotation not carried over.
func migrationSample() app.MigrationState {
	admin := engine.ObjectKey{Kind: "Ingress", Namespace: "default", Name: "admin"}
	api := engine.ObjectKey{Kind: "Ingress", Namespace: "default", Name: "api"}
	c := &report.MigrationComparison{Requests: 168, Kept: []engine.ObjectKey{{Kind: "HTTPRoute", Namespace: "default", Name: "admin-shop-example-com-http"}},
		Differences: []report.CompareDifference{
			{Request: report.CompareRequest{Host: "admin.shop.example.com", Path: "/", Ingress: admin, From: engine.Source{File: "samples/ingress-nginx/ingresses.yaml", Line: 124}},
				Ingress: report.CompareAnswer{Status: 308, Location: "https://admin.shop.example.com", Rule: "ingress/default/admin/rule/0/path/0", Source: "samples/ingress-nginx/ingresses.yaml:124"},
				Gateway: report.CompareAnswer{Status: 308, Location: "https://admin.shop.example.com/", Rule: "httproute/default/admin-shop-example-com-http/rule/0/match/0", Source: "samples/ingress-nginx/gateway.yaml:45"},
				Fields:  []string{"location"}},
			{Request: report.CompareRequest{HTTPS: true, Host: "shop.example.com", Path: "/api/x", Headers: map[string]string{"X-Canary": "never"},
				Ingress: api, From: engine.Source{File: "samples/ingress-nginx/ingresses.yaml", Line: 70}},
				Ingress: report.CompareAnswer{Status: 200, Services: "default/api", Added: "X-Forwarded-Proto: https",
					Rule: "ingress/default/api/rule/0/path/0/canary-never/header", Source: "samples/ingress-nginx/ingresses.yaml:50"},
				Gateway: report.CompareAnswer{Status: 500, Rule: "httproute/default/shop-example-com/rule/3/match/0", Source: "samples/ingress-nginx/gateway.yaml:343"},
				Fields:  []string{"status", "backend", "headers"}},
		},
		Converted: &watch.LoadResult{Problems: []watch.Problem{{File: "migrated.yaml", Line: 46, Column: 7,
			Object: engine.ObjectKey{Kind: "HTTPRoute", Namespace: "default", Name: "shop-example-com"}, Message: `spec.rules[0].filters[0].type: Unsupported value: "ExternalAuth"`}}},
		Dropped: []ingressnginx.DroppedFeature{{Ingress: api, Source: engine.Source{File: "samples/ingress-nginx/ingresses.yaml", Line: 40},
			What: "nginx.ingress.kubernetes.io/limit-rps", Why: "ingress-nginx limits each client to 10 requests a second; use your implementation's rate limit policy"}},
	}
	return app.MigrationState{Reload: 2, Comparison: c}
}

// TestGoldenMigration: with Ingresses in the folder the Migration tab is
// there (7 or m reaches it) and lists the comparison gwdev up sent; j moves
// to the next entry. Regenerate with: go test ./tui -run TestGoldenMigration -update
func TestGoldenMigration(t *testing.T) {
	st := sampleState(t, "ingress-nginx")
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		for _, c := range []struct {
			name string
			keys []string
		}{{"list", []string{"7"}}, {"next", []string{"m", "j"}}, {"help", []string{"7", "?"}}} {
			t.Run(fmt.Sprintf("%s_%dx%d", c.name, size[0], size[1]), func(t *testing.T) {
				m := newTestModel(size[0], size[1], Options{Dir: "samples/ingress-nginx"})
				tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(size[0], size[1]))
				tm.Send(st)
				tm.Send(migrationSample())
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
}

// TestMigrationTabOnlyWithIngresses: a folder without Ingresses has no
// Migration tab, 7 and m do nothing and tab cycles past it; with
// Ingresses the tab shows before any comparison arrives, says it is
// waiting, and enter opens the selected entry's Ingress in Detail.
func TestMigrationTabOnlyWithIngresses(t *testing.T) {
	m := newTestModel(120, 30, Options{})
	m.Update(sampleState(t, "conflicts"))
	if v := m.View(); strings.Contains(v, "Migration") {
		t.Errorf("a folder without Ingresses shows the Migration tab:\n%s", v)
	}
	for _, k := range []string{"7", "m"} {
		m.Update(keyMsg(k))
		if m.active != viewOverview {
			t.Errorf("%s switched to view %d without Ingresses", k, m.active)
		}
	}
	m.Update(keyMsg("6"))
	m.Update(keyMsg("tab"))
	if m.active != viewOverview {
		t.Errorf("tab from Graph went to view %d, want Overview (Migration is no tab)", m.active)
	}

	m = newTestModel(120, 30, Options{})
	m.Update(sampleState(t, "ingress-nginx"))
	m.Update(keyMsg("6"))
	m.Update(keyMsg("tab"))
	if m.active != viewMigration {
		t.Fatalf("tab from Graph went to view %d, want Migration", m.active)
	}
	if v := m.View(); !strings.Contains(v, "7 Migration") || !strings.Contains(v, "runs after each reload") {
		t.Errorf("before a comparison:\n%s", v)
	}
	m.Update(app.MigrationState{Reload: 1, Running: true})
	if v := m.View(); !strings.Contains(v, "Comparing the Ingresses") {
		t.Errorf("while the first comparison runs:\n%s", v)
	}
	m.Update(migrationSample())
	if v := m.View(); !strings.Contains(v, "7 Migration 2") || !strings.Contains(v, "168 requests") || !strings.Contains(v, "2 differences") {
		t.Errorf("after the comparison:\n%s", v)
	}
	m.Update(keyMsg("j"))
	_, cmd := m.Update(keyMsg("enter"))
	if cmd == nil {
		t.Fatal("enter on a difference does nothing")
	}
	m.Update(cmd())
	if m.active != viewDetail || !strings.Contains(m.View(), "name: api") {
		t.Errorf("enter did not open Ingress default/api in Detail (view %d):\n%s", m.active, m.View())
	}
	// The filter keeps the matching entries.
	m.Update(keyMsg("7"))
	m.views[viewMigration].SetFilter("limit-rps")
	if v := m.View(); strings.Contains(v, "admin.shop.example.com") || !strings.Contains(v, "limit-rps") {
		t.Errorf("filter limit-rps:\n%s", v)
	}
}
