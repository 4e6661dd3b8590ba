package h1

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// TestSameOrStringKeepsOnlyEqualBytes: a head equal to the last one is the
// last string, without an allocation; one that differs (even at the same
// length) is a new string of its own bytes.
func TestSameOrStringKeepsOnlyEqualBytes(t *testing.T) {
	var last string
	a := []byte("GET /a HTTP/1.1\r\n\r\n")
	first := sameOrString(&last, a)
	a[5] = 'b' // the reader's buffer is reused: the string must not change
	if first != "GET /a HTTP/1.1\r\n\r\n" {
		t.Fatalf("head changed with its buffer: %q", first)
	}
	if got := sameOrString(&last, a); got != "GET /b HTTP/1.1\r\n\r\n" {
		t.Fatalf("same-length head: got %q", got)
	}
	b := []byte("GET /b HTTP/1.1\r\n\r\n")
	again := sameOrString(&last, b)
	if unsafe.StringData(again) != unsafe.StringData(last) {
		t.Fatal("an equal head was copied again")
	}
	if n := testing.AllocsPerRun(100, func() { _ = sameOrString(&last, b) }); n != 0 {
		t.Fatalf("an equal head: %v allocations, want 0", n)
	}
}

// TestFastPathSameLengthRequestsOnOneConnection: requests of the same
// length that differ in their path, on one keep-alive connection, each
// reach the handler as sent.
func TestFastPathSameLengthRequestsOnOneConnection(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	f := &Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.URL.Path)
	}), ReadHeaderTimeout: 5 * time.Second, IdleTimeout: 5 * time.Second}
	f.Start(server, time.Now())
	defer func() { _ = f.Stop(t.Context()) }()
	br := bufio.NewReader(client)
	for _, p := range []string{"/a", "/a", "/b", "/b", "/a"} {
		_ = client.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := fmt.Fprintf(client, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", p); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if string(body) != p {
			t.Fatalf("request for %s served as %s", p, body)
		}
	}
}

// TestWireValueMatchesHeaderWrite: a value goes on the wire as
// http.Header.Write puts it (line breaks made spaces, surrounding
// whitespace trimmed), wherever its line breaks are.
func TestWireValueMatchesHeaderWrite(t *testing.T) {
	for _, v := range []string{"", "a", " a b ", "a\rb", "a\nb", "a\r\nb", "\r\n", "\ra", "a\n", " \t a\r\n\tb \r", strings.Repeat("x", 70) + "\n" + strings.Repeat("y", 70)} {
		var b strings.Builder
		_ = http.Header{"X": {v}}.Write(&b)
		if want := strings.TrimSuffix(strings.TrimPrefix(b.String(), "X: "), "\r\n"); WireValue(v) != want {
			t.Errorf("WireValue(%q) = %q, want %q", v, WireValue(v), want)
		}
	}
}
