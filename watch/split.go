package watch

import "bytes"

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
	var (
		chunks []chunk
		start  = 0 // offset of the current chunk
		first  = 1 // line of the current chunk
		line   = 1
	)
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		if isSeparator(data[off:next]) {
			chunks = append(chunks, chunk{data: data[start:off], line: first})
			start, first = next, line+1
		}
		off = next
		line++
	}
	chunks = append(chunks, chunk{data: data[start:], line: first})
	return chunks
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
