package watch

import (
	"bytes"
	"fmt"
	"os"
	"unicode/utf8"
)

// MaxFileSize is the largest manifest file gwdev reads (10 MiB).
const MaxFileSize = 10 << 20

// readManifest reads a file found by the walk, enforcing MaxFileSize.
func readManifest(f manifestFile) ([]byte, *Problem) {
	if f.size > MaxFileSize {
		return nil, tooLarge(f.path, f.size)
	}
	data, err := os.ReadFile(f.path)
	if err != nil {
		return nil, &Problem{File: f.path, Message: fmt.Sprintf("reading file: %v", unwrapPathError(err)), Kind: ProblemUnreadable}
	}
	return data, nil
}

// checkContent rejects content gwdev cannot treat as a manifest and strips a
// UTF-8 byte order mark.
func checkContent(file string, data []byte) ([]byte, *Problem) {
	if len(data) > MaxFileSize {
		return nil, tooLarge(file, int64(len(data)))
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data) {
		return nil, &Problem{File: file, Message: "binary file: not UTF-8 text; only YAML and JSON manifests are read", Kind: ProblemBinary}
	}
	return data, nil
}

func tooLarge(file string, size int64) *Problem {
	return &Problem{File: file, Message: fmt.Sprintf("file too large: %d bytes is over the 10 MiB (%d bytes) limit", size, MaxFileSize), Kind: ProblemTooLarge}
}

// tooManyDocuments is the problem of a file of more than MaxFileDocuments
// documents (docs of them).
func tooManyDocuments(file string, docs int) *Problem {
	return &Problem{File: file, Message: fmt.Sprintf("too many documents: %d documents (separated by --- lines) is over the %d-document limit", docs, MaxFileDocuments), Kind: ProblemTooLarge}
}
