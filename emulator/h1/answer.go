package h1

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/textproto"
	"strings"
	"unsafe"

	"golang.org/x/net/http/httpguts"
)

// Field is one header field: a canonical name and its value.
type Field struct {
	Name, Value string
}

// Answer is an upstream answer the pool read with its own parser instead
// of net/http's ReadResponse (Pool.Exchange): the head the backend sent,
// with what ReadResponse would have made of it, and the body. It takes the
// plain case only: HTTP/1.1, a final status (200-999), a body framed by
// one Content-Length, one Transfer-Encoding: chunked (trailers that were
// not announced are read after it, Body.Trailer), the connection's end, or
// none at all (HEAD, 204, 304), no Trailer field, no folded or malformed line, a head that
// fits the connection's buffer. The Answer and its Fields belong to
// the connection: they are valid until Body is read to its end or closed
// (the connection may then carry another exchange at once), so a caller
// keeps what it needs of them, Body included, before reading Body.
type Answer struct {
	// Status is the status code.
	Status int
	// Fields are the header fields in the order the backend sent them,
	// names canonical, values trimmed, as ReadResponse's header map holds
	// them (a Connection field that asks to close is dropped, as
	// ReadResponse drops it).
	Fields []Field
	// ContentLength is ReadResponse's: the declared length, -1 for a
	// chunked body or one the connection's end delimits, 0 for a 204 or
	// 304, the declared length or -1 for an answer to HEAD.
	ContentLength int64
	// Close is set when the backend asked to close the connection.
	Close bool
	// NoBody is set when the answer has no body (ReadResponse's
	// http.NoBody): HEAD, 204, 304, or a zero length. Body then reads
	// nothing.
	NoBody bool
	// Body is the body. Reading it to its end or closing it ends the
	// exchange (the connection goes back to the pool or is closed).
	Body *Body
	// chunked is set when the body is chunked (ContentLength -1).
	chunked bool
}

// asciiEqualFold reports whether s and t are equal, ASCII letters
// compared without case (net/http's test of a Transfer-Encoding).
func asciiEqualFold(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		a, b := s[i], t[i]
		if 'A' <= a && a <= 'Z' {
			a += 'a' - 'A'
		}
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		if a != b {
			return false
		}
	}
	return true
}

// chunkedBody reads a chunked body, then the trailer section after it, as
// net/http's response body does.
type chunkedBody struct {
	br *bufio.Reader
	cr io.Reader
	// trailer is what the trailer section held (nil: nothing, or not read
	// yet).
	trailer http.Header
}

func (b *chunkedBody) Read(p []byte) (int, error) {
	n, err := b.cr.Read(p)
	if err == io.EOF {
		if terr := b.readTrailer(); terr != nil {
			err = terr
		}
	}
	return n, err
}

// errTrailerEOF is net/http's error for a trailer section cut short.
var errTrailerEOF = errors.New("http: unexpected EOF reading trailer")

// readTrailer reads the trailer section (at least its empty line).
func (b *chunkedBody) readTrailer() error {
	buf, err := b.br.Peek(2)
	if string(buf) == "\r\n" {
		_, _ = b.br.Discard(2)
		return nil
	}
	if len(buf) < 2 {
		return errTrailerEOF
	}
	if err != nil {
		return err
	}
	// A trailer section must end within the buffer, as net/http requires.
	upcoming := false
	for size := 4; ; size++ {
		buf, err := b.br.Peek(size)
		if bytes.HasSuffix(buf, []byte("\r\n\r\n")) {
			upcoming = true
			break
		}
		if err != nil {
			break
		}
	}
	if !upcoming {
		return errors.New("http: suspiciously long trailer after chunked body")
	}
	hdr, err := textproto.NewReader(b.br).ReadMIMEHeader()
	if err != nil {
		if err == io.EOF {
			return errTrailerEOF
		}
		return err
	}
	if len(hdr) > 0 {
		b.trailer = http.Header(hdr)
	}
	return nil
}

// clReader reads a body of a known length from a connection's buffer: it
// returns io.EOF with the last bytes (as net/http's body does) and
// io.ErrUnexpectedEOF when the connection ends before them. A negative
// length reads until the connection ends.
type clReader struct {
	br *bufio.Reader
	n  int64
}

func (r *clReader) Read(p []byte) (int, error) {
	if r.n < 0 {
		return r.br.Read(p)
	}
	if r.n == 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	n, err := r.br.Read(p)
	r.n -= int64(n)
	switch {
	case err == io.EOF && r.n > 0:
		err = io.ErrUnexpectedEOF
	case err == nil && r.n == 0:
		err = io.EOF
	}
	return n, err
}

// answerHeadEnd looks at the complete lines at the start of b: it returns
// the head's length, its empty line included, once it is complete; 0 while
// it is not; bad when a line ends without CR (ReadResponse reads those;
// the pool's parser leaves them to it).
func answerHeadEnd(b []byte) (end int, bad bool) {
	for i := 0; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return 0, false
		}
		if j == 0 || b[i+j-1] != '\r' {
			return 0, true
		}
		if j == 1 {
			return i + 2, false
		}
		i += j + 1
	}
}

// readAnswer reads the answer's head with the pool's parser into the
// connection's Answer; ok false: the head is not one it takes (see
// Answer), or reading failed, and nothing was consumed: ReadResponse reads
// it instead.
func (pc *h1Conn) readAnswer(method string) (*Answer, bool) {
	if _, err := pc.br.Peek(1); err != nil {
		return nil, false
	}
	for {
		buf, _ := pc.br.Peek(pc.br.Buffered())
		end, bad := answerHeadEnd(buf)
		if bad {
			return nil, false
		}
		if end > 0 {
			a, ok := pc.parseAnswer(sameOrString(&pc.lastHead, buf[:end]), method) // fields are substrings
			if ok {
				_, _ = pc.br.Discard(end)
			}
			return a, ok
		}
		if pc.br.Buffered() == pc.br.Size() {
			return nil, false
		}
		if _, err := pc.br.Peek(pc.br.Buffered() + 1); err != nil {
			return nil, false
		}
	}
}

// parseAnswer parses a complete head (answerHeadEnd's bytes) to a request
// of method as ReadResponse would, for the answers the parser takes. A
// keep-alive backend sends the same head again and again (sameOrString
// then gives the same string): the same string for the same method gives
// the last result again, its fields copied from the connection's memo
// (what a consumer did to the last answer's fields does not reach it).
func (pc *h1Conn) parseAnswer(head, method string) (*Answer, bool) {
	m := &pc.memo
	if len(head) > 0 && len(head) == len(m.head) && unsafe.StringData(head) == unsafe.StringData(m.head) && method == m.method {
		if !m.ok {
			return nil, false
		}
		pc.answer.copyFrom(&m.answer)
		return &pc.answer, true
	}
	a, ok := pc.parseAnswerHead(head, method)
	m.head, m.method, m.ok = head, method, ok
	if ok {
		m.answer.copyFrom(a)
	}
	return a, ok
}

// copyFrom makes a src, its fields copied into a's own array.
func (a *Answer) copyFrom(src *Answer) {
	fields := append(a.Fields[:0], src.Fields...)
	*a = *src
	a.Fields = fields
}

// answerMemo is the last head parseAnswer parsed on a connection, for
// which method, and what it made of it (ok false: refused).
type answerMemo struct {
	head, method string
	ok           bool
	answer       Answer // its own fields; Body nil
}

// parseAnswerHead is parseAnswer's parse.
func (pc *h1Conn) parseAnswerHead(head, method string) (*Answer, bool) {
	a := &pc.answer
	*a = Answer{Fields: a.Fields[:0], ContentLength: -1}
	line, rest, _ := strings.Cut(head, "\r\n")
	if len(line) < 12 || line[:9] != "HTTP/1.1 " || (len(line) > 12 && line[12] != ' ') {
		return nil, false
	}
	code := 0
	for _, c := range []byte(line[9:12]) {
		if c < '0' || c > '9' {
			return nil, false
		}
		code = code*10 + int(c-'0')
	}
	if code < 200 {
		return nil, false // informational answers, 101 and odd codes: ReadResponse
	}
	a.Status = code
	lengths, length, encodings, encoding := 0, "", 0, ""
	for {
		line, rest, _ = strings.Cut(rest, "\r\n")
		if line == "" {
			break
		}
		if line[0] == ' ' || line[0] == '\t' {
			return nil, false // folded
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || !httpguts.ValidHeaderFieldName(k) || !validFieldValue(v) {
			return nil, false
		}
		k, v = textproto.CanonicalMIMEHeaderKey(k), trimOWS(v)
		switch k {
		case "Trailer":
			return nil, false // announced trailers: ReadResponse
		case "Transfer-Encoding":
			encodings++
			encoding = v
		case "Content-Length":
			lengths++
			length = v
		}
		a.Fields = append(a.Fields, Field{k, v})
	}
	if lengths > 1 {
		return nil, false
	}
	n := int64(-1)
	if lengths == 1 {
		var ok bool
		if n, ok = parseLength(length); !ok {
			return nil, false
		}
	}
	unbounded := false
	if encodings > 0 {
		if encodings > 1 || !asciiEqualFold(encoding, "chunked") {
			return nil, false // ReadResponse refuses them
		}
		a.chunked = true
		a.Fields = DropFields(a.Fields, "Transfer-Encoding") // as ReadResponse deletes it
	}
	switch {
	case method == http.MethodHead:
		a.ContentLength, a.NoBody = n, true
	case code == http.StatusNoContent || code == http.StatusNotModified:
		a.ContentLength, a.NoBody = 0, true
	case a.chunked:
		a.Fields = DropFields(a.Fields, "Content-Length") // as ReadResponse deletes it
	case n < 0:
		unbounded = true // delimited by the connection's end (ContentLength -1)
	default:
		a.ContentLength, a.NoBody = n, n == 0
	}
	var one [1]string
	for i := range a.Fields {
		if f := &a.Fields[i]; f.Name == "Connection" {
			one[0] = f.Value
			if httpguts.HeaderValuesContainsToken(one[:], "close") {
				a.Close = true
			}
		}
	}
	if a.Close {
		a.Fields = DropFields(a.Fields, "Connection") // ReadResponse deletes it
	}
	if unbounded {
		a.Close = true // whatever Connection says; the field stays
	}
	for _, f := range a.Fields {
		if f.Name == "Pragma" {
			if f.Value == "no-cache" && !fieldHas(a.Fields, "Cache-Control") {
				a.Fields = append(a.Fields, Field{"Cache-Control", "no-cache"}) // as ReadResponse adds it
			}
			break
		}
	}
	return a, true
}

// parseLength parses a Content-Length value as net/http does (decimal
// digits only, below 2^63).
func parseLength(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// DropFields removes the fields named name, in place, and returns the
// fields left.
func DropFields(fs []Field, name string) []Field {
	out := fs[:0]
	for _, f := range fs {
		if f.Name != name {
			out = append(out, f)
		}
	}
	clear(fs[len(out):])
	return out
}

// FieldValue is the first value of the field named key ("" : none).
func FieldValue(fs []Field, key string) string {
	for _, f := range fs {
		if f.Name == key {
			return f.Value
		}
	}
	return ""
}

// fieldHas reports whether a field is named key.
func fieldHas(fs []Field, key string) bool {
	for _, f := range fs {
		if f.Name == key {
			return true
		}
	}
	return false
}
