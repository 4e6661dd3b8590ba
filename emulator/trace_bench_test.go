package emulator

import (
	"net/http"
	"testing"

	"github.com/gwdev/gwdev/emulator/h1"
)

// BenchmarkTraceRecord records a forwarded request's trace as the lane
// does (request header and answer fields through the connection's memo)
// into a full ring with one subscriber that never reads (the admin
// metrics' place), without I/O: the trace's CPU per request.
func BenchmarkTraceRecord(b *testing.B) {
	r := newTraceRing(1000, 64<<20)
	sub, cancel := r.subscribe(1<<14, 0)
	defer cancel()
	hdr := http.Header{"User-Agent": {"bench"}, "Accept": {"*/*"}}
	fields := []h1.Field{{Name: "Content-Length", Value: "256"}, {Name: "Content-Type", Value: "application/octet-stream"},
		{Name: "Date", Value: "Mon, 02 Jan 2006 15:04:05 GMT"}, {Name: "Server", Value: "nginx"}}
	var m headerMemo
	b.ReportAllocs()
	for b.Loop() {
		r.record(Trace{Gateway: "gateway/default/bench", Listener: "http", Address: "127.0.0.1:18281", Port: 18281,
			Proto: "HTTP/1.1", Host: "api.example.com", Method: "GET", Path: "/api", VirtualHost: "api.example.com",
			Rule: "httproute/default/api/rule/0/match/0", Route: "httproute/default/api",
			Filters: []string{"RequestHeaderModifier: set X-Route: api"}, Backend: "httproute/default/api/rule/0/backend/0",
			Service: "default/api:80", Target: "mapped", Upstream: "127.0.0.1:18280", Attempts: 1, Status: 200,
			BytesOut: 256, RequestHeaders: hdr, responseFields: fields, memo: &m})
		if len(sub.queue) >= sub.max-1 {
			r.mu.Lock()
			sub.queue = sub.queue[:0]
			r.mu.Unlock()
		}
	}
}
