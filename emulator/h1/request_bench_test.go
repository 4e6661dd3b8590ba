package h1

import (
	"context"
	"testing"
)

// BenchmarkParseFastRequest is the fast path's parse of a keep-alive
// client's request head (bench/proxy.sh's request with two more fields):
// the CPU the head costs before routing, without I/O.
func BenchmarkParseFastRequest(b *testing.B) {
	block := "GET /api/users HTTP/1.1\r\nHost: api.example.com\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n"
	slot := newReqSlot(context.Background())
	b.ReportAllocs()
	for b.Loop() {
		slot.reset()
		if parseFastRequest(block, slot) == nil {
			b.Fatal("not parsed")
		}
	}
}
