package h1

import (
	"bufio"
	"bytes"
	"maps"
	"net/http"
	"slices"
	"testing"
)

// answerSeeds are answer heads (and a body) the pool's parser takes or
// leaves to ReadResponse.
var answerSeeds = []struct {
	method, raw string
	taken       bool
}{
	{"GET", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok", true},
	{"GET", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", true},
	{"GET", "HTTP/1.1 599 Whatever\r\ncontent-length: 002\r\nx-a: 1\r\nX-A: 2\r\nX-Empty:\r\nX-Sp: \t v \t\r\n\r\nok", true},
	{"GET", "HTTP/1.1 200 OK\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\nContent-Length: 2\r\n\r\nok", true},
	{"GET", "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", true},
	{"GET", "HTTP/1.1 200 OK\r\nPragma: no-cache\r\nContent-Length: 2\r\n\r\nok", true},
	{"GET", "HTTP/1.1 200 OK\r\nPragma: no-cache\r\nCache-Control: max-age=1\r\nContent-Length: 2\r\n\r\nok", true},
	{"HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n", true},
	{"HEAD", "HTTP/1.1 200 OK\r\n\r\n", true},
	{"GET", "HTTP/1.1 204 No Content\r\nContent-Length: 7\r\n\r\n", true},
	{"GET", "HTTP/1.1 304 Not Modified\r\nEtag: x\r\n\r\n", true},
	{"GET", "HTTP/1.1 200 OK\r\n\r\nclose-delimited", false},
	{"GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false},
	{"GET", "HTTP/1.1 200 OK\r\nTrailer: X\r\nContent-Length: 2\r\n\r\nok", false},
	{"GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok", false},
	{"GET", "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok", false},
	{"GET", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\nok", false},
	{"HEAD", "HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", false},
	{"GET", "HTTP/1.1 103 Early Hints\r\nLink: a\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false},
	{"GET", "HTTP/1.1 101 Switching Protocols\r\n\r\n", false},
	{"GET", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", false},
	{"GET", "HTTP/1.1  200 OK\r\nContent-Length: 2\r\n\r\nok", false},
	{"GET", "HTTP/1.1 200 OK\r\nX-Fold: a\r\n b\r\nContent-Length: 2\r\n\r\nok", false},
	{"GET", "HTTP/1.1 200 OK\nContent-Length: 2\n\nok", false},
	{"GET", "HTTP/1.1 200 OK\r\nX Bad: 1\r\nContent-Length: 2\r\n\r\nok", false},
	{"GET", "HTTP/1.1 200 OK\r\nX-Ctl: a\x01b\r\nContent-Length: 2\r\n\r\nok", false},
	{"GET", "HTTP/1.1 2000 OK\r\n\r\n", false},
}

// checkAnswer parses raw with the pool's parser and, when it takes it,
// requires what ReadResponse makes of the same bytes.
func checkAnswer(t *testing.T, method string, raw []byte) (taken bool) {
	end, bad := answerHeadEnd(raw)
	if bad || end == 0 {
		return false
	}
	pc := &h1Conn{}
	a, ok := pc.parseAnswer(string(raw[:end]), method)
	if !ok {
		return false
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%q: the parser took what ReadResponse refuses: %v", raw, err)
	}
	got := fieldsHeader(a.Fields)
	if !maps.EqualFunc(got, resp.Header, slices.Equal) || a.Status != resp.StatusCode ||
		a.ContentLength != resp.ContentLength || a.Close != resp.Close || a.NoBody != (resp.Body == http.NoBody) {
		t.Errorf("%q:\nparser       %d %v length %d close %v no body %v\nReadResponse %d %v length %d close %v no body %v", raw,
			a.Status, got, a.ContentLength, a.Close, a.NoBody,
			resp.StatusCode, resp.Header, resp.ContentLength, resp.Close, resp.Body == http.NoBody)
	}
	return true
}

// The pool's parser takes the plain answers and makes of them what
// ReadResponse makes; it leaves the others to ReadResponse.
func TestAnswerMatchesReadResponse(t *testing.T) {
	for _, s := range answerSeeds {
		if taken := checkAnswer(t, s.method, []byte(s.raw)); taken != s.taken {
			t.Errorf("%s %q: taken %v, want %v", s.method, s.raw, taken, s.taken)
		}
	}
}

func FuzzAnswerMatchesReadResponse(f *testing.F) {
	for _, s := range answerSeeds {
		f.Add(s.method == http.MethodHead, []byte(s.raw))
	}
	f.Fuzz(func(t *testing.T, head bool, raw []byte) {
		method := http.MethodGet
		if head {
			method = http.MethodHead
		}
		checkAnswer(t, method, raw)
	})
}
