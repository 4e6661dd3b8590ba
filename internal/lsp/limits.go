package lsp

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MaxMessageBytes is the largest message the server reads (a buffer of
// MaxDocumentBytes, escaped as JSON, fits). go.lsp.dev/jsonrpc2 allocates
// whatever a Content-Length header says (up to 2 GiB) and reads header
// lines of any length; boundedInput stops both before they happen.
const MaxMessageBytes = 64 << 20

// maxHeaderLine is the longest header line read.
const maxHeaderLine = 4 << 10

// boundedInput passes the client's bytes to the library's framing
// unchanged, following the headers and bodies only to refuse a header
// line longer than maxHeaderLine or a Content-Length over
// MaxMessageBytes: the read fails, which ends the connection, and the
// error says which limit bit.
type boundedInput struct {
	r io.Reader
	// line is the header line read so far; length the Content-Length of
	// the headers so far; body the bytes of the body still to come (0: in
	// the headers).
	line   []byte
	length int64
	body   int64
	// err is the limit that bit; readErr the last error of r (nil: none:
	// a read that failed did not fail for the stream).
	err, readErr error
}

func (b *boundedInput) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	if err != nil {
		b.readErr = err
	}
	for i := 0; i < n; {
		if b.body > 0 {
			k := min(int64(n-i), b.body)
			b.body -= k
			i += int(k)
			continue
		}
		j := bytes.IndexByte(p[i:n], '\n')
		if j < 0 {
			b.line = append(b.line, p[i:n]...)
			i = n
		} else {
			b.line = append(b.line, p[i:i+j]...)
			i += j + 1
			b.header()
		}
		if len(b.line) > maxHeaderLine {
			b.err = fmt.Errorf("a header line is longer than %d bytes", maxHeaderLine)
		}
		if b.err != nil {
			return 0, b.err
		}
	}
	return n, err
}

// failed reports whether the stream itself failed or a limit bit (not
// only a message that does not decode).
func (b *boundedInput) failed() bool { return b.err != nil || b.readErr != nil }

// header takes one complete header line.
func (b *boundedInput) header() {
	line := strings.TrimSpace(string(b.line))
	b.line = b.line[:0]
	if line == "" {
		b.body, b.length = b.length, 0
		return
	}
	name, val, ok := strings.Cut(line, ":")
	if !ok || name != "Content-Length" {
		return
	}
	n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
	if err != nil || n <= 0 {
		b.length = 0 // the library refuses it and reads on
		return
	}
	if n > MaxMessageBytes {
		b.err = fmt.Errorf("a message of %d bytes is over the %d-byte limit", n, MaxMessageBytes)
		return
	}
	b.length = n
}

// boundedStream is rwc with its input bounded.
type boundedStream struct {
	io.Reader
	rwc io.ReadWriteCloser
}

func (s boundedStream) Write(p []byte) (int, error) { return s.rwc.Write(p) }
func (s boundedStream) Close() error                { return s.rwc.Close() }
