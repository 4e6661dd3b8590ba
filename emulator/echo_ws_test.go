package emulator

import (
	"net"
	"strconv"
	"testing"
	"time"

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
