package watch

import (
	"bytes"
	"unicode/utf8"
)

// MaxFileDocuments is the most YAML documents gwdev reads from one file
// (100,000): a file with more is refused whole, as one over MaxFileSize is.
// Each document costs the loader about 120 bytes of bookkeeping and a
// problem or an object, whatever its size, so that 10 MiB of "---" lines
// (2.6 million empty documents) would otherwise hold hundreds of megabytes;
// a 10 MiB file of real manifests holds about 35,000.
const MaxFileDocuments = 100_000

// chunk is the text of one YAML document of a file (as separated by "---"
// lines), parsed on its own so that a syntax error in one document does not
// lose the others.
type chunk struct {
	data []byte
	// line is the 1-based line of the file where data starts.
	line int
}

// splitDocuments cuts data at document separator lines: lines that start
// with "---" followed by nothing but blanks or a comment, as kubectl's
// YAMLReader does. The separator lines themselves are dropped.
func splitDocuments(data []byte) []chunk {
	chunks, _ := splitDocumentsAtMost(data, -1)
	return chunks
}

// splitDocumentsAtMost is splitDocuments when data holds at most limit
// documents (limit < 0: any number). Otherwise it returns no chunks and the
// number of documents data holds, counted without keeping them. The work is
// linear in the bytes of data.
func splitDocumentsAtMost(data []byte, limit int) (chunks []chunk, docs int) {
	var (
		start = 0 // offset of the current chunk
		first = 1 // line of the current chunk
		line  = 1
	)
	docs = 1
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		if isSeparator(data[off:next]) {
			if limit < 0 || docs < limit {
				chunks = append(chunks, chunk{data: data[start:off], line: first})
			} else {
				chunks = nil
			}
			docs++
			start, first = next, line+1
		}
		off = next
		line++
	}
	if limit >= 0 && docs > limit {
		return nil, docs
	}
	return append(chunks, chunk{data: data[start:], line: first}), docs
}

// blankDocument reports whether a chunk holds nothing but blank lines and
// comments, a document with nothing to load: the loader skips it without
// giving it a job, a result or a parse (a file of "---" lines is nothing
// else).
func blankDocument(data []byte) bool {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimLeft(line, " \t\r")
		if len(line) > 0 && (line[0] != '#' || !yamlPrintable(line)) {
			return false
		}
	}
	return true
}

// yamlPrintable reports whether a comment is made of characters YAML
// allows (valid UTF-8, printable: YAML 1.2 §5.1) and ends with its line: a
// comment that is not still goes through the parser, which reports it as a
// problem. A carriage return (but the one before the newline), NEL, LS or PS
// inside the line is a line break to the parser, which reads what follows
// it as content ("#\r0" is the scalar 0, found by FuzzSplitDocuments).
func yamlPrintable(line []byte) bool {
	for len(line) > 0 {
		r, n := utf8.DecodeRune(line)
		switch {
		case r == utf8.RuneError && n <= 1:
			return false
		case r == '\r' && n < len(line), r == 0x85, r == 0x2028, r == 0x2029:
			return false
		case r == '\t' || r == '\r':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || (r >= 0xd800 && r < 0xe000) || r == 0xfffe || r == 0xffff:
			return false
		}
		line = line[n:]
	}
	return true
}

// isSeparator reports whether a line (with its newline) is "---" optionally
// followed by blanks or a comment.
func isSeparator(line []byte) bool {
	if !bytes.HasPrefix(line, []byte("---")) {
		return false
	}
	rest := bytes.TrimSpace(line[3:])
	return len(rest) == 0 || rest[0] == '#'
}
