package emulator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	echosrv "github.com/gwdev/gwdev/emulator/echo"
	"github.com/gwdev/gwdev/engine/table"
)

func simpleTable(addr string, p int32, svc string) *table.Table {
	return newTable(gateway("gw", addr, port(p, listener("http", "", vhost("", rule("r", prefix("/"), echo(svc, 1)))))))
}

func (s *Server) listenerOf(addr string, p int32) *boundListener {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listeners[bindKey{addr, p, "TCP"}]
}

func TestPortOffsetFallback(t *testing.T) {
	p, offset := heldPort(t)
	s := New(Config{PortOffset: offset})
	defer s.Close(context.Background())
	rep := s.Apply(simpleTable("127.0.0.1", p, "svc"))
	want := fmt.Sprintf("127.0.0.1:%d", int(p)+offset)
	if len(rep.Ports) != 1 || rep.Ports[0].Bound != want || !rep.Ports[0].Fallback || rep.Err() != nil {
		t.Fatalf("report %+v, want bound %s", rep.Ports, want)
	}
	// The port held by another socket: the report says why it moved.
	if got := rep.Ports[0].Moved; got != "in use by another process" {
		t.Errorf("Moved = %q, want the port in use named", got)
	}
	resp, err := http.Get("http://" + want + "/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("request on the fallback port: %v %v", resp, err)
	}
	resp.Body.Close()
	// The next Apply keeps the fallback listener.
	if rep := s.Apply(simpleTable("127.0.0.1", p, "svc2")); rep.Ports[0].Bound != want || !rep.Ports[0].Reused {
		t.Errorf("second apply %+v", rep.Ports)
	}

	// Without an offset the failure is reported, not fatal.
	s2 := New(Config{})
	defer s2.Close(context.Background())
	rep = s2.Apply(simpleTable("127.0.0.1", p, "svc"))
	if rep.Ports[0].Error == "" || rep.Ports[0].Bound != "" || rep.Err() == nil {
		t.Errorf("report without offset %+v", rep.Ports)
	}
}

func TestNotServedAndRefusedPorts(t *testing.T) {
	p := freePort(t, "127.0.0.1")
	https := listener("https", "")
	https.Protocol = table.HTTPSProtocolType
	udp := listener("udp", "")
	udp.Protocol = table.UDPProtocolType
	udpPort := port(p, udp)
	udpPort.Transport = "UDP"
	s := New(Config{})
	defer s.Close(context.Background())
	rep := s.Apply(newTable(
		gateway("a", "127.0.0.1", port(p, https), udpPort),
		gateway("b", "", port(p, listener("http", ""))),
		gateway("c", "10.1.2.3", port(p, listener("http", ""))),
	))
	if len(rep.Ports) != 4 {
		t.Fatalf("report %+v", rep.Ports)
	}
	if !strings.Contains(rep.Ports[0].NotServed, "HTTPS") || rep.Ports[1].NotServed != "" || rep.Ports[1].Bound == "" ||
		rep.Ports[0].Error != "" || rep.Ports[0].Bound != "" {
		t.Errorf("not served: %+v %+v", rep.Ports[0], rep.Ports[1])
	}
	if !strings.Contains(rep.Ports[2].Error, "no address") || !strings.Contains(rep.Ports[3].Error, "not a loopback") {
		t.Errorf("refused: %+v %+v", rep.Ports[2], rep.Ports[3])
	}
	// Nothing was bound: the port is still free.
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
	if err != nil {
		t.Errorf("port was bound: %v", err)
	} else {
		ln.Close()
	}
}

func TestGatewaysOnTwoAddresses(t *testing.T) {
	p := freePort(t, "127.0.0.2")
	s := New(Config{})
	defer s.Close(context.Background())
	tab := newTable(
		gateway("one", "127.0.0.1", port(p, listener("http", "", vhost("", rule("one", prefix("/"), echo("one", 1)))))),
		gateway("two", "127.0.0.2", port(p, listener("http", "", vhost("", rule("two", prefix("/"), echo("two", 1)))))),
	)
	if err := s.Apply(tab).Err(); err != nil {
		t.Skipf("cannot bind both loopback addresses: %v", err)
	}
	for ip, want := range map[string]string{"127.0.0.1": "one", "127.0.0.2": "two"} {
		resp, err := http.Get(fmt.Sprintf("http://%s:%d/", ip, p))
		if err != nil {
			t.Fatal(err)
		}
		var e echosrv.Response
		_ = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if e.Ingress != want || e.Service != want {
			t.Errorf("%s answered by %s/%s", ip, e.Ingress, e.Service)
		}
		ex := Explain(tab, ip, p, httptestRequest("GET", "http://x/"))
		if ex.Gateway != "gateway/default/"+want {
			t.Errorf("Explain for %s: %s", ip, ex.Gateway)
		}
	}
}

func httptestRequest(method, url string) *http.Request {
	r, _ := http.NewRequest(method, url, nil)
	return r
}

func TestBindOverride(t *testing.T) {
	p := freePort(t, "127.0.0.1")
	s := New(Config{BindOverride: "127.0.0.1"})
	defer s.Close(context.Background())
	rep := s.Apply(simpleTable("10.9.8.7", p, "svc")) // not loopback: only the override makes it bindable
	if rep.Err() != nil || rep.Ports[0].Bound != fmt.Sprintf("127.0.0.1:%d", p) {
		t.Fatalf("report %+v", rep.Ports)
	}
	// Two Gateways on one port cannot share the override address.
	rep = s.Apply(newTable(
		gateway("a", "10.9.8.7", port(p, listener("http", ""))),
		gateway("b", "10.9.8.8", port(p, listener("http", ""))),
	))
	if rep.Ports[0].Error != "" || !strings.Contains(rep.Ports[1].Error, "already served") {
		t.Errorf("report %+v", rep.Ports)
	}
}

// TestHotReload applies 50 tables while clients send requests without
// pause: no request may fail, the listener of an unchanged port is never
// re-bound, in-flight requests finish on their table, and a removed port is
// closed gracefully.
func TestHotReload(t *testing.T) {
	ip := "127.0.0.1"
	p, p2 := freePort(t, ip), freePort(t, ip)
	// The slow requests go to backends that say when a request has arrived
	// (so the reloads start only once both are in flight: a fixed sleep let
	// a loaded machine route them on a later table) and answer after a
	// delay with their name: slowFirst only on table 0.
	slowArrived, extraArrived := make(chan struct{}), make(chan struct{})
	slowBackend := func(name string, arrived chan struct{}, delay time.Duration) string {
		var once sync.Once
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if arrived != nil {
				once.Do(func() { close(arrived) })
			}
			time.Sleep(delay)
			_, _ = io.WriteString(w, name)
		}))
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().String()
	}
	slowFirst := slowBackend("slow-0", slowArrived, 400*time.Millisecond)
	slowLater := slowBackend("slow-later", nil, 0)
	extraSlow := slowBackend("extra", extraArrived, 300*time.Millisecond)
	build := func(i int) *table.Table {
		slowAddr := slowLater
		if i == 0 {
			slowAddr = slowFirst
		}
		mainPort := port(p, listener("http", "", vhost("",
			rule("slow", prefix("/slow"), mapped("slow", 1, slowAddr)),
			rule("r", prefix("/"), echo(fmt.Sprintf("v%d", i), 1)))))
		if i%2 == 0 {
			return newTable(gateway("gw", ip, mainPort,
				port(p2, listener("extra", "", vhost("", rule("extra", prefix("/"), mapped("extra", 1, extraSlow)))))))
		}
		return newTable(gateway("gw", ip, mainPort))
	}
	s := New(Config{})
	defer s.Close(context.Background())
	if err := s.Apply(build(0)).Err(); err != nil {
		t.Fatal(err)
	}
	first := s.listenerOf(ip, p)
	firstLn := first.ln

	// A slow request in flight across the reloads.
	slow := make(chan string, 1)
	go func() {
		resp, err := http.Get(fmt.Sprintf("http://%s:%d/slow", ip, p))
		if err != nil {
			slow <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		slow <- fmt.Sprint(resp.StatusCode, " ", string(b))
	}()
	// And one on the port that the next table removes.
	extra := make(chan int, 1)
	go func() {
		resp, err := http.Get(fmt.Sprintf("http://%s:%d/", ip, p2))
		if err != nil {
			extra <- -1
			return
		}
		resp.Body.Close()
		extra <- resp.StatusCode
	}()
	for _, arrived := range []chan struct{}{slowArrived, extraArrived} {
		select {
		case <-arrived:
		case <-time.After(10 * time.Second):
			t.Fatal("the slow requests never reached their backends")
		}
	}

	var stop atomic.Bool
	var failures, total atomic.Int64
	var wg sync.WaitGroup
	var errMu sync.Mutex
	var firstErr string
	for c := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := &http.Transport{Proxy: nil, DisableKeepAlives: c%2 == 1}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
			for !stop.Load() {
				total.Add(1)
				resp, err := client.Get(fmt.Sprintf("http://%s:%d/x", ip, p))
				if err == nil {
					var e echosrv.Response
					err = json.NewDecoder(resp.Body).Decode(&e)
					resp.Body.Close()
					if err == nil && (resp.StatusCode != 200 || !strings.HasPrefix(e.Service, "v")) {
						err = fmt.Errorf("status %d from %q", resp.StatusCode, e.Service)
					}
				}
				if err != nil {
					failures.Add(1)
					errMu.Lock()
					if firstErr == "" {
						firstErr = err.Error()
					}
					errMu.Unlock()
				}
			}
		}()
	}
	for i := 1; i <= 50; i++ {
		rep := s.Apply(build(i))
		if err := rep.Err(); err != nil {
			t.Fatalf("apply %d: %v", i, err)
		}
		if !rep.Ports[0].Reused {
			t.Fatalf("apply %d re-bound port %d", i, p)
		}
		time.Sleep(2 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	if failures.Load() != 0 || total.Load() < 50 {
		t.Errorf("%d of %d requests failed during reloads (first: %s)", failures.Load(), total.Load(), firstErr)
	}
	if bl := s.listenerOf(ip, p); bl != first || bl.ln != firstLn {
		t.Error("the unchanged listener was replaced")
	}
	if got := <-slow; got != "200 slow-0" {
		t.Errorf("in-flight request: %s, want it answered by the table it started on", got)
	}
	if got := <-extra; got != 200 {
		t.Errorf("in-flight request on a removed port: %d", got)
	}
	// The last table (50) has the extra port again; build(51) removes it.
	s.Apply(build(51))
	deadline := time.Now().Add(3 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", fmt.Sprintf("%s:%d", ip, p2), time.Second)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the removed port still accepts connections")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// syncBuffer is a goroutine-safe bytes.Buffer for the access log.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestTracesRedactionAndAccessLog(t *testing.T) {
	var log syncBuffer
	p := freePort(t, "127.0.0.1")
	s := New(Config{AccessLog: &log, TraceBuffer: 5})
	if err := s.Apply(simpleTable("127.0.0.1", p, "svc")).Err(); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", fmt.Sprintf("http://127.0.0.1:%d/login?api_key=KEY1&Token=TOK2&user=bob&password=PW3", p),
		strings.NewReader("0123456789"))
	req.Host = "app.example.com"
	req.Header.Set("Authorization", "Bearer SECRET4")
	req.Header.Set("Cookie", "session=SECRET5")
	req.Header.Set("X-Echo-Set-Header", "Set-Cookie:id=SECRET6")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	resp.Body.Close()
	tr := waitTrace(t, s, func(tr Trace) bool { return tr.Method == "POST" })
	if tr.Path != "/login?api_key=[redacted]&Token=[redacted]&user=bob&password=[redacted]" ||
		tr.RequestHeaders.Get("Authorization") != Redacted || tr.RequestHeaders.Get("Cookie") != Redacted ||
		tr.ResponseHeaders.Get("Set-Cookie") != Redacted {
		t.Errorf("not redacted: %s %v %v", tr.Path, tr.RequestHeaders, tr.ResponseHeaders)
	}
	if tr.Gateway != "gateway/default/gw" || tr.Listener != "gateway/default/gw/listener/http" || tr.Host != "app.example.com" ||
		tr.Rule != "httproute/default/r/rule/0/match/0" || tr.Backend == "" || tr.Target != "echo" || tr.Why == "" ||
		tr.Upstream != "echo" || tr.Status != 200 || tr.BytesIn != 10 || tr.BytesOut != int64(buf.Len()) ||
		tr.Duration <= 0 || tr.Client == "" || tr.Address == "" || tr.Attempts != 1 {
		t.Errorf("trace %+v", tr)
	}
	// Fill the ring past its size: only the newest 5 remain, newest last.
	for i := range 7 {
		r, _ := http.Get(fmt.Sprintf("http://127.0.0.1:%d/n%d", p, i))
		r.Body.Close()
	}
	waitTrace(t, s, func(tr Trace) bool { return tr.Path == "/n6" })
	ts := s.Traces()
	if len(ts) != 5 || ts[4].Path != "/n6" || ts[0].Path != "/n2" {
		t.Errorf("ring: %d traces, last %q", len(ts), ts[len(ts)-1].Path)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := log.String()
	// (SECRET6 is in the request's X-Echo-Set-Header; its Set-Cookie answer
	// is checked above.)
	for _, secret := range []string{"KEY1", "TOK2", "PW3", "SECRET4", "SECRET5"} {
		if strings.Contains(out, secret) {
			t.Errorf("access log leaks %s", secret)
		}
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	lines := 0
	for sc.Scan() {
		var tr Trace
		if err := json.Unmarshal(sc.Bytes(), &tr); err != nil {
			t.Fatalf("access log line %q: %v", sc.Text(), err)
		}
		lines++
	}
	if lines != 8 {
		t.Errorf("%d access log lines, want 8", lines)
	}
}

// A subscriber that never takes its traces, and one that takes them,
// never slow requests down; the stuck one keeps its queue's worth and
// counts the rest as dropped, the live one gets every trace.
func TestSubscribersNeverBlock(t *testing.T) {
	h := serve(t, func(p int32) *table.Table { return simpleTable("127.0.0.1", p, "svc") })
	stuck := h.s.SubscribeTraces(1) // never read until cancelled
	live := h.s.SubscribeTraces(100)
	var got atomic.Int64
	liveDone := make(chan struct{})
	go func() {
		defer close(liveDone)
		live.Each(func(*Trace) { got.Add(1) })
	}()
	start := time.Now()
	for range 20 {
		if res := h.get("x", "/"); res.status != 200 {
			t.Fatal(res.status)
		}
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("requests slowed down by a stuck subscriber")
	}
	waitTrace(t, h.s, func(Trace) bool { return got.Load() == 20 })
	stuck.Cancel()
	live.Cancel()
	live.Cancel() // idempotent
	select {
	case <-liveDone:
	case <-time.After(5 * time.Second):
		t.Fatal("Each did not return after Cancel")
	}
	n := 0
	stuck.Each(func(*Trace) { n++ }) // returns at once: cancelled
	if n != 1 || stuck.Dropped() != 19 {
		t.Errorf("stuck subscriber: %d queued, %d dropped; want 1 and 19", n, stuck.Dropped())
	}
	if live.Dropped() != 0 || got.Load() != 20 {
		t.Errorf("live subscriber: %d traces, %d dropped", got.Load(), live.Dropped())
	}
}

// Next hands a batch consumer what was recorded, an empty batch after a
// quiet spell of idle, and ok false once its context is done.
func TestTraceSubscriptionNext(t *testing.T) {
	h := serve(t, func(p int32) *table.Table { return simpleTable("127.0.0.1", p, "svc") })
	sub := h.s.SubscribeTraces(100)
	defer sub.Cancel()
	ctx, cancel := context.WithCancel(context.Background())
	batch, ok := sub.Next(ctx, 20*time.Millisecond, nil)
	if !ok || len(batch) != 0 {
		t.Fatalf("quiet: %d traces, ok %v; want an empty batch", len(batch), ok)
	}
	for range 3 {
		if res := h.get("x", "/"); res.status != 200 {
			t.Fatal(res.status)
		}
	}
	var n int
	for deadline := time.Now().Add(5 * time.Second); n < 3 && time.Now().Before(deadline); {
		batch, ok = sub.Next(ctx, time.Second, batch)
		if !ok {
			t.Fatal("ended early")
		}
		n += len(batch)
	}
	if n != 3 {
		t.Fatalf("%d traces, want 3", n)
	}
	cancel()
	if _, ok := sub.Next(ctx, time.Second, batch); ok {
		t.Error("Next after its context ended: ok")
	}
}

func TestCloseLetsInFlightRequestsFinish(t *testing.T) {
	p := freePort(t, "127.0.0.1")
	s := New(Config{})
	if err := s.Apply(simpleTable("127.0.0.1", p, "svc")).Err(); err != nil {
		t.Fatal(err)
	}
	done := make(chan int, 1)
	go func() {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/?delay=200ms", p))
		if err != nil {
			done <- -1
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	// Close once the echo backend has the request (it logs it before
	// the delay): a fixed pause let a slow client connect after Close.
	for deadline := time.Now().Add(5 * time.Second); len(s.EchoLog("default/svc")) == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the echo backend")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if code := <-done; code != 200 {
		t.Errorf("in-flight request got %d", code)
	}
	if rep := s.Apply(simpleTable("127.0.0.1", p, "svc")); rep.Err() == nil {
		t.Error("Apply after Close succeeded")
	}
}
