package tui

import (
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/watch"
)

// bigSnapshot is one shared Gateway and n HTTPRoutes (two rules each)
// over ten namespaces, with their Services, like bench/genroutes.
func bigSnapshot(n int) *engine.Snapshot {
	all := gwv1.NamespacesFromAll
	s := &engine.Snapshot{Sources: map[engine.ObjectKey]engine.Source{}}
	s.Gateways = []*gwv1.Gateway{{
		ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: "infra", Generation: 1},
		Spec: gwv1.GatewaySpec{GatewayClassName: "gwdev", Listeners: []gwv1.Listener{{
			Name: "http", Protocol: gwv1.HTTPProtocolType, Port: 80,
			AllowedRoutes: &gwv1.AllowedRoutes{Namespaces: &gwv1.RouteNamespaces{From: &all}},
		}}},
	}}
	gwNS := gwv1.Namespace("infra")
	prefix := gwv1.PathMatchPathPrefix
	for i := 0; i < n; i++ {
		ns := fmt.Sprintf("team-%d", i%10)
		name := fmt.Sprintf("app-%04d", i)
		api, web := "/api"+fmt.Sprint(i), "/"
		port := gwv1.PortNumber(8080)
		s.HTTPRoutes = append(s.HTTPRoutes, &gwv1.HTTPRoute{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Generation: 1},
			Spec: gwv1.HTTPRouteSpec{
				CommonRouteSpec: gwv1.CommonRouteSpec{ParentRefs: []gwv1.ParentReference{{Name: "shared", Namespace: &gwNS}}},
				Hostnames:       []gwv1.Hostname{gwv1.Hostname(name + ".example.com")},
				Rules: []gwv1.HTTPRouteRule{
					{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: &prefix, Value: &api}}},
						BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name + "-api"), Port: &port}}}}},
					{Matches: []gwv1.HTTPRouteMatch{{Path: &gwv1.HTTPPathMatch{Type: &prefix, Value: &web}}},
						BackendRefs: []gwv1.HTTPBackendRef{{BackendRef: gwv1.BackendRef{BackendObjectReference: gwv1.BackendObjectReference{Name: gwv1.ObjectName(name + "-web"), Port: &port}}}}},
				},
			},
		})
		for _, svc := range []string{name + "-api", name + "-web"} {
			s.Services = append(s.Services, &engine.Service{Name: svc, Namespace: ns,
				Spec: engine.ServiceSpec{Ports: []corev1.ServicePort{{Port: 8080}}}})
		}
		s.Sources[engine.ObjectKey{Kind: "HTTPRoute", Namespace: ns, Name: name}] = engine.Source{File: fmt.Sprintf("routes-%04d.yaml", i/50), Line: 1 + 20*(i%50)}
	}
	return s
}

func bigState(b *testing.B, n int) *app.State {
	b.Helper()
	res := engine.Translate(bigSnapshot(n), engine.Options{Now: metav1.NewTime(fixedNow)})
	if len(res.Objects.HTTPRoutes) != n {
		b.Fatalf("%d routes", len(res.Objects.HTTPRoutes))
	}
	return &app.State{Update: &watch.Update{Result: &watch.LoadResult{Files: n/50 + 1}}, Result: res,
		Ports: &emulator.ApplyReport{Ports: fakePorts(res.Table)}, Time: fixedNow}
}

// loadTraces is one frame's worth of traces at 2,000 requests/s and
// 30 frames/s, to routes of the big snapshot.
func loadTraces(seq, n int) []emulator.Trace {
	out := make([]emulator.Trace, n)
	for i := range out {
		k := (seq*n + i) % 1000
		out[i] = emulator.Trace{Time: fixedNow.Add(time.Duration(seq*n+i) * 500 * time.Microsecond),
			Client: "127.0.0.1:40000", Listener: "gateway/infra/shared/listener/http", Address: "127.0.0.1:8080", Port: 80,
			Host: fmt.Sprintf("app-%04d.example.com", k), Method: "GET", Path: fmt.Sprintf("/api%d/items", k),
			Rule: fmt.Sprintf("httproute/team-%d/app-%04d/rule/0/match/0", k%10, k), Route: fmt.Sprintf("HTTPRoute/team-%d/app-%04d", k%10, k),
			Matched: &emulator.RuleAt{Route: table.ObjectKey{Kind: "HTTPRoute", Namespace: fmt.Sprintf("team-%d", k%10), Name: fmt.Sprintf("app-%04d", k)}, Match: 0},
			Service: fmt.Sprintf("team-%d/app-%04d-api:8080", k%10, k), Target: "echo", Status: 200,
			Duration: emulator.Duration(800 * time.Microsecond)}
	}
	return out
}

// BenchmarkKeyToFrame is a key press to the redrawn frame in each view,
// with 1,000 routes loaded, the trace list full and 2,000 requests/s
// arriving (one 67-trace batch per frame between key presses).
func BenchmarkKeyToFrame(b *testing.B) {
	st := bigState(b, 1000)
	const perFrame = 2000 / 30
	for _, c := range []struct {
		name string
		keys []string
	}{
		{"overview", []string{"1", "down"}}, {"routes", []string{"2", "down"}}, {"routes_expanded", []string{"2", "enter", "down"}},
		{"problems", []string{"3", "down"}}, {"traces", []string{"4", "down"}}, {"detail", []string{"5", "]"}},
		{"switch_view", []string{"tab"}}, {"filter_keystroke", []string{"2", "/", "a"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := newTestModel(160, 48, Options{})
			run(m, st)
			for i := 0; i < 1000/perFrame+1; i++ {
				m.Update(TracesMsg{Traces: loadTraces(i, perFrame)})
			}
			setup, last := c.keys[:len(c.keys)-1], keyMsg(c.keys[len(c.keys)-1])
			for _, k := range setup {
				m.Update(keyMsg(k))
			}
			batches := make([][]emulator.Trace, 16)
			for i := range batches {
				batches[i] = loadTraces(100+i, perFrame)
			}
			var worst time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				m.Update(TracesMsg{Traces: batches[i%len(batches)]})
				_ = m.View()
				b.StartTimer()
				start := time.Now()
				m.Update(last)
				_ = m.View()
				worst = max(worst, time.Since(start))
			}
			b.ReportMetric(float64(worst.Microseconds()), "worst-µs")
			if mean := b.Elapsed() / time.Duration(b.N); mean > 50*time.Millisecond {
				b.Errorf("a key press takes %s to redraw on average, over 50ms", mean)
			}
		})
	}
}

// BenchmarkTraceFrame is one frame of traffic in the Traces view with
// 1,000 traces kept: a batch of traces and the redraw. A batch is what
// ForwardTraces sends per frame at 30 frames/s: 67 traces at 2,000
// requests/s, 667 at 20,000.
func BenchmarkTraceFrame(b *testing.B) {
	for _, rate := range []int{2000, 20000} {
		b.Run(fmt.Sprintf("%dreq/s", rate), func(b *testing.B) {
			perFrame := rate / 30
			m := newTestModel(160, 48, Options{})
			run(m, bigState(b, 1000))
			press(m, "4")
			for i := 0; i < 1000/perFrame+1; i++ {
				m.Update(TracesMsg{Traces: loadTraces(i, perFrame)})
			}
			batches := make([][]emulator.Trace, 16)
			for i := range batches {
				batches[i] = loadTraces(100+i, perFrame)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Update(TracesMsg{Traces: batches[i%len(batches)]})
				_ = m.View()
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)*30/1e4, "%cpu@30fps")
		})
	}
}

// BenchmarkReload is a new 1,000-route state reaching the dashboard:
// digest, change detection against the previous state, every view rebuilt
// and the frame drawn.
func BenchmarkReload(b *testing.B) {
	states := []*app.State{bigState(b, 1000), bigState(b, 1000)}
	m := newTestModel(160, 48, Options{})
	run(m, states[0])
	press(m, "2")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Update(states[(i+1)%2])
		_ = m.View()
	}
}
