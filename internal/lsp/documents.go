package lsp

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"
)

// Limits on what the server keeps of the editor's buffers: a hostile or
// runaway client cannot make it hold more than MaxOpenBytes of text.
const (
	// MaxDocumentBytes is the largest buffer the server keeps (the
	// loader's own limit is watch.MaxFileSize; a larger buffer is not
	// overlaid: the file on disk is read, and a diagnostic says why).
	MaxDocumentBytes = 10 << 20
	// MaxOpenBytes is the most text kept across every open buffer.
	MaxOpenBytes = 64 << 20
	// MaxOpenDocuments is the most open buffers kept.
	MaxOpenDocuments = 1000
)

// document is one open buffer: its text as the editor has it.
type document struct {
	uri  protocol.DocumentURI
	path string
	text string
	// refused says why the buffer is not overlaid ("" : it is).
	refused string
}

// contentChange is one change of didChange: a range replaced by text, or
// the whole text when Range is nil (go.lsp.dev/protocol's type has no
// way to tell a full change from an insertion at 0:0).
type contentChange struct {
	Range *protocol.Range `json:"range,omitempty"`
	Text  string          `json:"text"`
}

// didChangeParams are textDocument/didChange's parameters.
type didChangeParams struct {
	TextDocument   protocol.VersionedTextDocumentIdentifier `json:"textDocument"`
	ContentChanges []contentChange                          `json:"contentChanges"`
}

// apply applies the changes in order; a range outside the text is clamped
// to it, as editors do.
func (d *document) apply(changes []contentChange) {
	for _, c := range changes {
		if c.Range == nil {
			d.text = c.Text
			continue
		}
		start, end := offsetOf(d.text, c.Range.Start), offsetOf(d.text, c.Range.End)
		if end < start {
			start, end = end, start
		}
		d.text = d.text[:start] + c.Text + d.text[end:]
	}
}

// offsetOf returns the byte offset in text of an LSP position (a line and
// a UTF-16 code unit in it), clamped to the line and to the text.
func offsetOf(text string, p protocol.Position) int {
	off := 0
	for line := uint32(0); line < p.Line; line++ {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	lineEnd := strings.IndexByte(text[off:], '\n')
	if lineEnd < 0 {
		lineEnd = len(text) - off
	}
	units := uint32(0)
	for i, r := range text[off : off+lineEnd] {
		if units >= p.Character {
			return off + i
		}
		units += uint32(utf16Len(r))
	}
	return off + lineEnd
}

// utf16Len is how many UTF-16 code units r takes.
func utf16Len(r rune) int {
	if n := utf16.RuneLen(r); n > 0 {
		return n
	}
	return 1 // an invalid rune counts as the replacement character
}

// lines splits text into lines without their line ends.
func lines(text string) []string {
	ls := strings.Split(text, "\n")
	for i, l := range ls {
		ls[i] = strings.TrimSuffix(l, "\r")
	}
	return ls
}

// utf16Column converts a 0-based column counted in characters (runes, as
// the YAML parser counts them) in line to UTF-16 code units.
func utf16Column(line string, runes int) uint32 {
	units := 0
	for i, r := range line {
		if runes == 0 {
			break
		}
		_ = i
		units += utf16Len(r)
		runes--
	}
	return uint32(units + max(runes, 0))
}

// runeColumn converts an LSP character (UTF-16 code units) in line to a
// byte offset in it.
func byteColumn(line string, units uint32) int {
	n := uint32(0)
	for i, r := range line {
		if n >= units {
			return i
		}
		n += uint32(utf16Len(r))
	}
	return len(line)
}

// pathOf returns the file path of a file: URI.
func pathOf(u protocol.DocumentURI) (string, error) {
	p, err := url.Parse(string(u))
	if err != nil {
		return "", fmt.Errorf("document URI %q: %w", u, err)
	}
	if p.Scheme != uri.FileScheme {
		return "", fmt.Errorf("document URI %q: only file: URIs are served", u)
	}
	return filepath.Clean(filepath.FromSlash(p.Path)), nil
}

// uriOf returns the file: URI of path.
func uriOf(path string) protocol.DocumentURI { return uri.File(path) }

// validText reports whether text can be laid over a file: the loader
// refuses what is not UTF-8 all the same, but the editor's JSON decoder
// already replaced invalid bytes, so this only guards the size.
func validText(text string) string {
	switch {
	case len(text) > MaxDocumentBytes:
		return fmt.Sprintf("buffer too large: %d bytes is over the %d-byte limit; the file on disk is read instead", len(text), MaxDocumentBytes)
	case !utf8.ValidString(text):
		return "buffer is not UTF-8 text; the file on disk is read instead"
	}
	return ""
}
