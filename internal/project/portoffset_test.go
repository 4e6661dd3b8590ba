package project

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine"
)

// TestPortOffsetReachesTheLoopCheck: the project passes up's --port-offset
// to the engine, so a backend mapped to the port a listener falls back to
// under that offset is warned about as a loop into gwdev, and one at the
// default offset's port is not (and the reverse without the flag).
func TestPortOffsetReachesTheLoopCheck(t *testing.T) {
	dir := t.TempDir()
	const manifests = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: gw}]
  rules: [{backendRefs: [{name: self, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: self}
spec: {ports: [{port: 80}]}
`
	if err := os.WriteFile(filepath.Join(dir, "gw.yaml"), []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	loops := func(offset int32, target string) int {
		p, err := Open([]string{dir}, Flags{Backends: []string{"default/self:80=" + target}, PortOffset: offset})
		if err != nil {
			t.Fatal(err)
		}
		_, res, err := p.LoadAndTranslate(engine.Options{}.Now)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, f := range res.Findings {
			if f.Reason == engine.ReasonLoopsIntoGwdev {
				n++
				if !strings.Contains(f.Message, target) {
					t.Errorf("the finding does not name %s: %s", target, f.Message)
				}
			}
		}
		return n
	}
	for _, c := range []struct {
		offset int32
		target string
		want   int
	}{
		{1000, "localhost:1080", 1},
		{1000, "localhost:8080", 0},
		{0, "localhost:8080", 1},
		{0, "localhost:1080", 0},
		{-1, "localhost:8080", 0},
	} {
		if got := loops(c.offset, c.target); got != c.want {
			t.Errorf("--port-offset %d, backend at %s: %d loop findings, want %d", c.offset, c.target, got, c.want)
		}
	}
}
