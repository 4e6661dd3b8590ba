package h1

import (
	"bufio"
	"bytes"
	"io"
	"maps"
	"net/http"
	"net/http/httputil"
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
	{"GET", "HTTP/1.1 200 OK\r\n\r\nclose-delimited", true},
	{"GET", "HTTP/1.1 200 OK\r\nConnection: keep-alive, X-A\r\nX-A: 1\r\n\r\nclose-delimited", true},
	{"GET", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nclose-delimited", true},
	{"GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", true},
	{"GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3;x=1\r\nabc\r\n0\r\nX-T: 1\r\nX-T: 2\r\n\r\nnext", true},
	{"GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n", true},
	{"GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", true},
	{"GET", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", true},
	{"GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1", true},
	{"GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: CHUNKED\r\nContent-Length: 5\r\n\r\n0\r\n\r\n", true},
	{"HEAD", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", true},
	{"GET", "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", true},
	{"GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chun\u212aed\r\n\r\n0\r\n\r\n", false},
	{"GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", false},
	{"GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false},
	{"GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: x\r\n\r\n0\r\n\r\n", false},
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
	stdBuf := bufio.NewReader(bytes.NewReader(raw))
	resp, err := http.ReadResponse(stdBuf, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%q: the parser took what ReadResponse refuses: %v", raw, err)
	}
	// The body too: the same bytes, the same failure or not, the same
	// trailers, and what is left on the connection after it.
	br := bufio.NewReader(bytes.NewReader(raw))
	_, _ = br.Discard(end)
	var body io.Reader = &clReader{br: br, n: a.ContentLength}
	if a.NoBody {
		body = &clReader{br: br}
	} else if a.chunked {
		body = &chunkedBody{br: br, cr: httputil.NewChunkedReader(br)}
	}
	got, gotErr := io.ReadAll(body)
	want, wantErr := io.ReadAll(resp.Body)
	gotRest, _ := io.ReadAll(br)
	wantRest, _ := io.ReadAll(stdBuf)
	var trailer http.Header
	if cb, ok := body.(*chunkedBody); ok {
		trailer = cb.trailer
	}
	if !bytes.Equal(got, want) || (gotErr == nil) != (wantErr == nil) || !maps.EqualFunc(trailer, resp.Trailer, slices.Equal) ||
		(gotErr == nil && !bytes.Equal(gotRest, wantRest)) {
		t.Errorf("%q body:\nparser       %q %v trailer %v rest %q\nReadResponse %q %v trailer %v rest %q", raw,
			got, gotErr, trailer, gotRest, want, wantErr, resp.Trailer, wantRest)
	}
	if got := fieldsHeader(a.Fields); !maps.EqualFunc(got, resp.Header, slices.Equal) || a.Status != resp.StatusCode ||
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

// TestAnswerMemoGivesAFreshParse: the same head string again on one
// connection gives what a fresh parse makes of it, whatever the consumer
// did to the last answer, and another method or another head is parsed
// anew.
func TestAnswerMemoGivesAFreshParse(t *testing.T) {
	fresh := func(head, method string) (Answer, bool) {
		a, ok := (&h1Conn{}).parseAnswer(head, method)
		if !ok {
			return Answer{}, false
		}
		return *a, true
	}
	same := func(got *Answer, gotOK bool, want Answer, wantOK bool) bool {
		if gotOK != wantOK {
			return false
		}
		if !gotOK {
			return true
		}
		return got.Status == want.Status && got.ContentLength == want.ContentLength && got.Close == want.Close &&
			got.NoBody == want.NoBody && got.chunked == want.chunked && got.Body == want.Body && slices.Equal(got.Fields, want.Fields)
	}
	pc := &h1Conn{}
	for _, s := range answerSeeds {
		end, bad := answerHeadEnd([]byte(s.raw))
		if bad || end == 0 {
			continue
		}
		head := s.raw[:end]
		for _, method := range []string{s.method, http.MethodHead, s.method} {
			want, wantOK := fresh(head, method)
			for range 2 { // parsed, then the memo's
				a, ok := pc.parseAnswer(head, method)
				if !same(a, ok, want, wantOK) {
					t.Fatalf("%s %q: %+v %v, want %+v %v", method, head, a, ok, want, wantOK)
				}
				if ok { // what a consumer may do to the answer it was given
					a.Fields = append(DropFields(a.Fields, "Content-Length"), Field{"X-Added", "1"})
					if len(a.Fields) > 0 {
						a.Fields[0] = Field{"X-Changed", "2"}
					}
					a.Status, a.ContentLength, a.Close, a.NoBody, a.chunked = 1, 12345, !a.Close, !a.NoBody, !a.chunked
				}
			}
		}
	}
}
