package main

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
)

// TestTrailingSlashPrefixTiesServedAsExplained serves the engine golden
// case where a newer route's PathPrefix "/api/" meets an older route's
// "/api" (the same prefix: the spec ignores a trailing slash): real
// requests go to the older route's rules, explain names the same rules, and
// the differential probes agree on every port.
func TestTrailingSlashPrefixTiesServedAsExplained(t *testing.T) {
	loader, err := project.NewLoader(nil)
	if err != nil {
		t.Fatal(err)
	}
	const in = "../../engine/testdata/precedence-prefix-trailing-slash.in.yaml"
	b, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	load := func() *engine.Snapshot {
		return loader.LoadBytes("precedence-prefix-trailing-slash.in.yaml", b).Snapshot
	}
	skipped := map[diffSkip]int{}
	if n := runDifferential(t, diffInput{name: "precedence-prefix-trailing-slash", load: load}, skipped); n == 0 {
		t.Fatal("no probes ran")
	}

	res := engine.Translate(load(), engine.Options{Now: metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))})
	tab := res.Table
	movePorts(t, tab)
	s := emulator.New(emulator.Config{TraceBuffer: 1000})
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	}()
	rep := s.Apply(tab)
	bound := rep.Ports[0].Bound
	cases := []struct {
		path, header, host, wantRule string
	}{
		{"/api/x", "", "", "httproute/default/old-api/rule/0/match/0"},
		{"/api/", "", "", "httproute/default/old-api/rule/0/match/0"},
		{"/api", "", "", "httproute/default/old-api/rule/0/match/0"},
		{"/api/x", "1", "", "httproute/default/old-api/rule/1/match/0"},
		{"/v1/x", "", "same.example", "httproute/default/a-same-age/rule/0/match/0"},
	}
	for _, c := range cases {
		for i := 0; i < 20; i++ {
			req, _ := http.NewRequest("GET", "http://"+bound+c.path, nil)
			if c.header != "" {
				req.Header.Set("X-Canary", c.header)
			}
			if c.host != "" {
				req.Host = c.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		o := &app.ProbeFlags{Method: "GET"}
		if c.header != "" {
			o.Headers = []string{"X-Canary: " + c.header}
		}
		host := "example.com"
		if c.host != "" {
			host = c.host
		}
		_, port, _ := strings.Cut(bound, ":")
		probe, err := o.Probe("http://" + host + ":" + port + c.path)
		if err != nil {
			t.Fatal(err)
		}
		probe.Address = tab.Gateways[0].Address
		if ex := emulator.ExplainProbe(tab, probe); ex.Rule != c.wantRule {
			t.Errorf("explain %s (X-Canary %q): rule %q, want %q", c.path, c.header, ex.Rule, c.wantRule)
		}
	}
	// Only requests' traces count: a connection that ends without carrying
	// a request gets a trace of its own (emulator/conntrace.go), and one
	// such made this test see 101 on a loaded machine.
	requests := func() []emulator.Trace {
		var out []emulator.Trace
		for _, tr := range s.Traces() {
			if tr.Method != "" {
				out = append(out, tr)
			}
		}
		return out
	}
	deadline := time.Now().Add(2 * time.Second)
	var ts []emulator.Trace
	for time.Now().Before(deadline) {
		if ts = requests(); len(ts) >= 100 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if len(ts) != 100 {
		t.Fatalf("%d request traces, want 100", len(ts))
	}
	for i, tr := range ts {
		if want := cases[i/20].wantRule; tr.Rule != want {
			t.Errorf("request %d (%s): served by %q, want %q", i, cases[i/20].path, tr.Rule, want)
		}
	}
}
