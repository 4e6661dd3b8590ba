package watch

import "testing"

func BenchmarkLoadOneRoute(b *testing.B) {
	l, _ := NewLoader()
	data := []byte(routeYAML(1))
	l.LoadBytes("x.yaml", data)
	b.ResetTimer()
	for b.Loop() {
		r := l.loadDocument("x.yaml", chunk{data: data, line: 1})
		if len(r.problems) > 0 {
			b.Fatal(r.problems)
		}
	}
}
