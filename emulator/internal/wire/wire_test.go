package wire

import (
	"errors"
	"io"
	"net"
	"net/http/httptest"
	"testing"
	"time"
)

// TestPipeHalfClose: each direction is buffered, and CloseWrite ends the
// peer's reads with EOF while the other direction still works.
func TestPipeHalfClose(t *testing.T) {
	a, b := Pipe()
	if _, err := a.Write([]byte("ping")); err != nil { // buffered: nobody reads yet
		t.Fatal(err)
	}
	if err := a.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(b)
	if err != nil || string(got) != "ping" {
		t.Fatalf("b read %q, %v; want ping, EOF", got, err)
	}
	if _, err := b.Write([]byte("pong")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(a, buf); err != nil || string(buf) != "pong" {
		t.Fatalf("a read %q, %v", buf, err)
	}
	_ = b.Close()
	_ = a.Close()
}

// TestQueue: pushed connections come out of Accept; after Close, Accept
// fails with net.ErrClosed and a pushed connection is closed.
func TestQueue(t *testing.T) {
	q := NewQueue(Addr("q"))
	a, b := Pipe()
	go q.Push(a)
	c, err := q.Accept()
	if err != nil || c != a {
		t.Fatalf("Accept = %v, %v", c, err)
	}
	_ = q.Close()
	if _, err := q.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Accept after Close: %v", err)
	}
	x, y := Pipe()
	done := make(chan struct{})
	go func() { q.Push(x); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Push after Close blocked")
	}
	if _, err := y.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("peer of a connection pushed after Close reads %v, want EOF", err)
	}
	_ = b.Close()
}

func TestPlainHTTPAndGRPC(t *testing.T) {
	for in, want := range map[string]string{"GET / HTTP/1.1\r\n": "GET", "PRI * HTTP/2.0\r\n": "PRI", "\x16\x03\x01": "", "GETX": ""} {
		if m, ok := PlainHTTP([]byte(in)); m != want || ok != (want != "") {
			t.Errorf("PlainHTTP(%q) = %q, %v", in, m, ok)
		}
	}
	r := httptest.NewRequest("POST", "/svc/M", nil)
	r.Header.Set("Content-Type", "application/grpc+proto")
	if IsGRPC(r) {
		t.Error("HTTP/1.1 request taken for gRPC")
	}
	r.ProtoMajor = 2
	if !IsGRPC(r) {
		t.Error("HTTP/2 application/grpc+proto not taken for gRPC")
	}
	if NormalizeSNI("Example.COM.") != "example.com" {
		t.Error("NormalizeSNI")
	}
}
