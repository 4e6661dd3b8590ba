package emulator

import (
	"bufio"
	"bytes"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/internal/cputime"
)

// rawLaneBackend answers every request on its connections with answer,
// reading requests with reused buffers only, so that a benchmark's
// allocations are the gateway's.
func rawLaneBackend(t testing.TB, answer []byte) string {
	return rawBackend(t, func(c net.Conn, br *bufio.Reader) {
		_ = c.SetDeadline(time.Time{}) // a benchmark may run longer than a test's connection
		for {
			if !skipRequestHead(br) {
				return
			}
			if _, err := c.Write(answer); err != nil {
				return
			}
		}
	})
}

// skipRequestHead reads a request head (without a body) from br with its
// reused buffer; false: the connection failed first.
func skipRequestHead(br *bufio.Reader) bool {
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return false
		}
		if len(line) <= 2 {
			return true
		}
	}
}

// readRawAnswer reads one answer with a Content-Length from br without
// allocating and returns its status code.
func readRawAnswer(br *bufio.Reader) (int, error) {
	status, length := 0, 0
	for first := true; ; first = false {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if first {
			status, _ = strconv.Atoi(string(line[9:12])) // no allocation: the compiler's conversion for Atoi
			continue
		}
		if len(line) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			length, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		} else if ok && bytes.EqualFold(k, []byte("Transfer-Encoding")) {
			length = -1
		}
	}
	if length >= 0 {
		_, err := br.Discard(length)
		return status, err
	}
	for { // chunked: until the empty line after the last chunk
		line, err := br.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if string(line) == "0\r\n" {
			_, err := br.Discard(2)
			return status, err
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil {
			return 0, err
		}
		if _, err := br.Discard(int(n) + 2); err != nil {
			return 0, err
		}
	}
}

// BenchmarkLaneRaw is the forwarding lane on loopback with raw peers: a
// keep-alive client and a backend that allocate nothing, so allocs/op are
// the gateway's own; cpu-ns/op is the process's CPU time per request
// (client and backend included, both minimal). The route is bench/proxy.sh's:
// a PathPrefix match, a request header set, a 256-byte answer.
func BenchmarkLaneRaw(b *testing.B) {
	benchLaneRaw(b, "Content-Length: 256\r\n\r\n"+strings.Repeat("x", 256))
}

// BenchmarkLaneRawChunked is BenchmarkLaneRaw with a chunked answer (one
// 256-byte chunk): the client gets it chunked too.
func BenchmarkLaneRawChunked(b *testing.B) {
	benchLaneRaw(b, "Transfer-Encoding: chunked\r\n\r\n100\r\n"+strings.Repeat("x", 256)+"\r\n0\r\n\r\n")
}

// benchLaneRaw runs the lane benchmark with a backend answering
// framing (the framing fields and the body) after its other fields.
func benchLaneRaw(b *testing.B, framing string) {
	h, roundTrip := laneRawSetup(b, framing)
	served := h.s.laneServed.Load()
	cpu0, measured := cputime.Process()
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		roundTrip()
		n++
	}
	if cpu1, _ := cputime.Process(); measured && n > 0 {
		b.ReportMetric(float64(cpu1-cpu0)/float64(n), "cpu-ns/op")
	}
	if got := h.s.laneServed.Load() - served; got != int64(n) {
		b.Fatalf("the lane served %d of %d requests", got, n)
	}
}

// laneRawSetup serves bench/proxy.sh's route (a PathPrefix match, a
// request header set) with a raw backend answering framing after its other
// fields, and returns a round trip of one request on a raw keep-alive
// client, the pools warmed.
func laneRawSetup(t testing.TB, framing string) (*harness, func()) {
	answer := []byte("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nDate: Mon, 02 Jan 2006 15:04:05 GMT\r\n" + framing)
	addr := rawLaneBackend(t, answer)
	h := serve(t, func(p int32) *table.Table {
		r := rule("api", prefix("/api"), mapped("api", 1, addr))
		r.Filters = []table.Filter{{Type: table.FilterRequestHeaderModifier,
			RequestHeaderModifier: &table.HeaderModifier{Set: []table.Header{{Name: "X-Route", Value: "api"}}}}}
		return newTable(gateway("gw", "127.0.0.1", port(p, listener("http", "", vhost("api.example.com", r)))))
	})
	c, err := net.Dial("tcp", net.JoinHostPort(h.ip, strconv.Itoa(int(h.port))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	req := []byte("GET /api/users HTTP/1.1\r\nHost: api.example.com\r\nUser-Agent: bench\r\nAccept: */*\r\n\r\n")
	br := bufio.NewReaderSize(c, 8<<10)
	roundTrip := func() {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if st, err := readRawAnswer(br); err != nil || st != 200 {
			t.Fatalf("status %d, %v", st, err)
		}
	}
	for range 100 {
		roundTrip() // warm the pools
	}
	return h, roundTrip
}
