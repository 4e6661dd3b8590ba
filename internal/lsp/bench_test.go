package lsp

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.lsp.dev/protocol"
)

// BenchmarkEditToDiagnostics types one character into a route's buffer
// in a workspace of 1,000 HTTPRoutes (100 files of 10, one Gateway) and
// measures the time until the diagnostics pushed for that file change:
// sectionName "http" → "htta" (NoMatchingParent appears) and back. Each
// edit follows a quiet while, as typing one character does. It reports
// the median and the slowest edit, and the process's peak RSS.
//
//	go test ./internal/lsp -run '^$' -bench EditToDiagnostics -benchtime 20x
func BenchmarkEditToDiagnostics(b *testing.B) {
	dir := b.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	write("gateway.yaml", "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: gw\nspec:\n  gatewayClassName: gwdev\n  listeners:\n  - name: http\n    protocol: HTTP\n    port: 8080\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  ports:\n  - port: 80\n")
	for f := range 100 {
		var s strings.Builder
		for r := range 10 {
			fmt.Fprintf(&s, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: r%d-%d\nspec:\n  parentRefs:\n  - name: gw\n    sectionName: http\n  hostnames: [r%d-%d.example.com]\n  rules:\n  - matches:\n    - path: {type: PathPrefix, value: /r%d}\n    backendRefs:\n    - name: svc\n      port: 80\n", f, r, f, r, r)
		}
		write(fmt.Sprintf("routes-%03d.yaml", f), s.String())
	}
	c := startClient(b, dir, nil, nil)
	name := "routes-050.yaml"
	path := c.path(name)
	text := c.open(name)
	c.waitDiags("first diagnostics", func(d map[string][]protocol.Diagnostic) bool { return len(d[c.path("gateway.yaml")]) > 0 })
	time.Sleep(300 * time.Millisecond)
	var took []time.Duration
	b.ResetTimer()
	for i := range b.N {
		bad := i%2 == 0
		start := time.Now()
		if bad {
			text = c.edit(name, text, i+2, "sectionName: http\n", "sectionName: htta\n")
		} else {
			text = c.edit(name, text, i+2, "sectionName: htta\n", "sectionName: http\n")
		}
		c.waitDiags("edit", func(d map[string][]protocol.Diagnostic) bool { return hasCode(d[path], "NoMatchingParent", -1) == bad })
		took = append(took, time.Since(start))
		b.StopTimer()
		time.Sleep(150 * time.Millisecond) // a quiet while: the next character reloads at once
		b.StartTimer()
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(took[len(took)-1].Microseconds())/1000, "max-ms")
	b.ReportMetric(float64(peakRSS())/(1<<20), "peak-RSS-MB")
}

// peakRSS is the process's peak resident set (VmHWM; 0: unknown).
func peakRSS() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(v), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}
