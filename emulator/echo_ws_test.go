package emulator

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	echosrv "github.com/gwdev/gwdev/emulator/echo"
	"golang.org/x/net/websocket"

	"github.com/gwdev/gwdev/engine/table"
)

func TestEchoWebSocket(t *testing.T) {
	h := serve(t, func(p int32) *table.Table { return simpleTable("127.0.0.1", p, "ws") })
	addr := net.JoinHostPort(h.ip, strconv.Itoa(int(h.port)))
	ws, err := websocket.Dial("ws://"+addr+"/ws", "", "http://gateway/")
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer ws.Close()
	_ = ws.SetDeadline(time.Now().Add(5 * time.Second))
	for _, msg := range []string{"hello", "again"} {
		if err := websocket.Message.Send(ws, msg); err != nil {
			t.Fatalf("send: %v", err)
		}
		var got string
		if err := websocket.Message.Receive(ws, &got); err != nil {
			t.Fatalf("receive: %v", err)
		}
		if got != msg {
			t.Errorf("echo = %q, want %q", got, msg)
		}
	}
}

func TestEchoRetrySimulation(t *testing.T) {
	e := echosrv.NewTarget(&table.Backend{Service: service("flaky"), Port: 80}, nil, nil)
	get := func(q string) (int, error) {
		resp, err := e.RoundTrip(httptest.NewRequest(http.MethodGet, "http://echo/retry/x?"+q, nil))
		if err != nil {
			return 0, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}
	for i, want := range []int{503, 503, 200, 200} {
		if code, err := get("uuid=a&succeedAfter=2&responseCode=503"); err != nil || code != want {
			t.Errorf("attempt %d = %d, %v; want %d", i+1, code, err, want)
		}
	}
	if _, err := get("uuid=b&succeedAfter=1"); !errors.Is(err, echosrv.ErrReset) {
		t.Errorf("connection failure mode: err = %v, want a reset", err)
	}
	if code, err := get("uuid=b&succeedAfter=1"); err != nil || code != 200 {
		t.Errorf("after the failure = %d, %v; want 200", code, err)
	}
	if code, _ := get("succeedAfter=1"); code != http.StatusBadRequest {
		t.Errorf("without uuid = %d, want 400", code)
	}
}

func TestEchoLogSince(t *testing.T) {
	s := New(Config{})
	l := s.echoLog("default/svc")
	l.Add("old")
	time.Sleep(2 * time.Millisecond)
	mark := time.Now()
	l.Add("new")
	if got := s.EchoLog("default/svc"); len(got) != 2 {
		t.Errorf("EchoLog = %q, want both lines", got)
	}
	if got := s.EchoLogSince("default/svc", mark); len(got) != 1 || got[0] != "new" {
		t.Errorf("EchoLogSince = %q, want [new]", got)
	}
}
