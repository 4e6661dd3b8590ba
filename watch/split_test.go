package watch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
)

// emptyDocuments is n "---" lines: n+1 empty documents.
func emptyDocuments(n int) []byte {
	return bytes.Repeat([]byte("---\n"), n)
}

// nullDocuments is n documents holding only a null ("~"): nothing to load,
// but each is parsed (blank ones are not).
func nullDocuments(n int) []byte {
	return append(bytes.Repeat([]byte("~\n---\n"), n-1), "~\n"...)
}

// TestSplitDocumentsAtMost: a file within the limit splits as without one;
// over it, no chunks and the exact count.
func TestSplitDocumentsAtMost(t *testing.T) {
	data := []byte("a: 1\n---\nb: 2\n---\nc: 3\n")
	all := splitDocuments(data)
	for limit := 0; limit <= 4; limit++ {
		chunks, docs := splitDocumentsAtMost(data, limit)
		if docs != 3 {
			t.Errorf("limit %d: %d documents, want 3", limit, docs)
		}
		switch {
		case limit < 3 && chunks != nil:
			t.Errorf("limit %d: %d chunks, want none", limit, len(chunks))
		case limit >= 3 && !cmp.Equal(chunks, all, cmp.AllowUnexported(chunk{})):
			t.Errorf("limit %d: chunks %v, want %v", limit, chunks, all)
		}
	}
}

// TestLoadRefusesFileOverDocumentLimit: a file of more than
// MaxFileDocuments documents (here empty ones, 4 bytes each) is refused
// whole, with a problem naming the file, its count and the limit, through
// LoadDir as through LoadBytes; at the limit it loads.
func TestLoadRefusesFileOverDocumentLimit(t *testing.T) {
	ns := "apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a}\n"
	atLimit := append([]byte(ns), emptyDocuments(MaxFileDocuments-1)...)
	l := newTestLoader(t)
	r := l.LoadBytes("ok.yaml", atLimit)
	if len(r.Problems) != 0 || len(r.Snapshot.Namespaces) != 1 {
		t.Fatalf("at the limit: %d namespaces, problems %v", len(r.Snapshot.Namespaces), r.Problems)
	}

	dir := t.TempDir()
	over := append([]byte(ns), emptyDocuments(MaxFileDocuments)...)
	if err := os.WriteFile(filepath.Join(dir, "many.yaml"), over, 0o644); err != nil {
		t.Fatal(err)
	}
	r = l.LoadDir(dir)
	want := fmt.Sprintf("%s: too many documents: %d documents (separated by --- lines) is over the %d-document limit",
		filepath.Join(dir, "many.yaml"), MaxFileDocuments+1, MaxFileDocuments)
	if len(r.Problems) != 1 || r.Problems[0].String() != want || r.Problems[0].Kind != ProblemTooLarge {
		t.Fatalf("problems %v, want one %q of kind %s", r.Problems, want, ProblemTooLarge)
	}
	if len(r.Snapshot.Namespaces) != 0 {
		t.Errorf("%d namespaces loaded from a refused file", len(r.Snapshot.Namespaces))
	}
}

// TestLoadCollectionsLinearInDocuments (null documents, which are parsed,
// unlike blank ones): the Collect hook is the CLI's
// runtime.GC, which marks the whole heap, and a load's heap holds every
// one of its documents (its chunk and result), so its cost is calls ×
// documents. That must grow like the documents (8 times the documents,
// at most twice 8 times the work), not their square: with a collection
// every compactBatchDocs documents it grew 63 times, and 1,000,000 empty
// documents took 14 s. Counted, not timed.
func TestLoadCollectionsLinearInDocuments(t *testing.T) {
	const perFile = 40_000
	l := newTestLoader(t)
	work := func(files int) int {
		calls := 0
		l.Collect = func() { calls++ }
		in := make([]fileInput, files)
		for i := range in {
			in[i] = fileInput{path: fmt.Sprintf("f%d.yaml", i), data: nullDocuments(perFile)}
		}
		if r := l.load(in, nil); len(r.Problems) != 0 {
			t.Fatalf("problems: %v", r.Problems)
		}
		return calls * files * perFile
	}
	small, large := work(1), work(8)
	if small == 0 || large > 16*small {
		t.Errorf("collection work (calls × documents): %d for %d documents, %d for 8 times as many (%.1f times, want at most 16)",
			small, perFile, large, float64(large)/float64(small))
	}
}

// TestLoadAllocationsLinearInDocuments: the bytes a load allocates grow
// like its documents (splitting, the jobs and results, the per-document
// scratch). Counted, not timed.
func TestLoadAllocationsLinearInDocuments(t *testing.T) {
	l := newTestLoader(t)
	l.LoadBytes("warm.yaml", nullDocuments(100)) // scratch, pools
	alloc := func(n int) uint64 {
		data := nullDocuments(n)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := l.LoadBytes("e.yaml", data)
		runtime.ReadMemStats(&after)
		if len(r.Problems) != 0 {
			t.Fatalf("problems: %v", r.Problems)
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(4_000), alloc(32_000)
	if large > 10*small {
		t.Errorf("allocated %d bytes for 4,000 documents, %d for 32,000 (%.1f times, want at most 10)",
			small, large, float64(large)/float64(small))
	}
}

// BenchmarkLoad1e6Documents loads 1,000,000 documents (ten files at
// MaxFileDocuments), each a null, so that every one is parsed, with Collect
// set as the CLI sets it.
func BenchmarkLoad1e6Documents(b *testing.B) {
	l := newTestLoader(b)
	l.Collect = runtime.GC
	files := make([][]byte, 10)
	for i := range files {
		files[i] = nullDocuments(MaxFileDocuments)
	}
	b.ReportAllocs()
	for b.Loop() {
		in := make([]fileInput, len(files))
		for i, f := range files {
			in[i] = fileInput{path: fmt.Sprintf("f%d.yaml", i), data: f}
		}
		if r := l.load(in, nil); len(r.Problems) != 0 {
			b.Fatalf("problems: %v", r.Problems[:1])
		}
	}
}

// BenchmarkSplitDocuments1e6 splits 4 MB of "---" lines (1,000,001
// documents) without a limit.
func BenchmarkSplitDocuments1e6(b *testing.B) {
	data := emptyDocuments(1_000_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if n := len(splitDocuments(data)); n != 1_000_001 {
			b.Fatalf("%d documents", n)
		}
	}
}

// splitSeeds are separator lines and their near misses.
var splitSeeds = []string{
	"a: 1\n---\nb: 2\n--- # comment\r\n---x: 3\n",
	"---", "---\n", "a\n---", "--- foo\n", "---\r\n", "\r\n---\r\n", "a\r", "a\r\n---\r\nb\r",
	"--- #c\n---\t\n", "x\n---\n---\n", "----\n", " ---\n", "---#\n", "---\u0085\n", "---\u00a0x\n",
	"\n\n---\n\n", "# c\n---\n# d\n", "a: |\n  ---\n---\nb: 1", "...\n---\n",
	strings.Repeat("x", 5000) + "\n---\n" + strings.Repeat("y", 4095) + "\r\n---\r\n",
}

// FuzzSplitDocuments checks the loader's document splitting: the chunks and
// the separator lines between them are data, in order; every chunk's line
// is where it starts; no chunk holds a separator line; a limit refuses
// exactly the inputs over it; and the non-empty chunks are the documents
// kubectl's YAMLReader reads (the splitter it follows), whenever that
// reader accepts the input.
func FuzzSplitDocuments(f *testing.F) {
	for _, s := range splitSeeds {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob("../samples/*/*.yaml")
	for i, file := range files {
		if i%4 != 0 {
			continue // a spread is enough
		}
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		chunks := checkSplit(t, data)
		checkSplitLimits(t, data, chunks)
		checkSplitLikeKubectl(t, data, chunks)
		checkBlankLoadsNothing(t, chunks)
	})
}

// checkSplit checks splitDocuments' chunks against data and returns them.
func checkSplit(t *testing.T, data []byte) []chunk {
	t.Helper()
	chunks := splitDocuments(data)
	if len(chunks) == 0 {
		t.Fatal("no chunks")
	}
	prev := 0 // end of the previous chunk
	for i, c := range chunks {
		start := cap(data) - cap(c.data) // chunks are slices of data
		if start < prev || start+len(c.data) > len(data) {
			t.Fatalf("chunk %d at %d..%d, out of order or outside data (previous ended at %d)", i, start, start+len(c.data), prev)
		}
		if i == 0 && start != 0 {
			t.Fatalf("first chunk starts at %d", start)
		}
		if i > 0 {
			sep := data[prev:start]
			nl := bytes.IndexByte(sep, '\n')
			oneLine := nl == len(sep)-1 || nl < 0 && start == len(data)
			if !isSeparator(sep) || !oneLine {
				t.Fatalf("chunk %d: %q between chunks is not one separator line", i, sep)
			}
		}
		// (An empty last chunk after a "---" with no newline starts on the
		// line after it, which data does not have.)
		if want := 1 + bytes.Count(data[:start], []byte("\n")); c.line != want && len(c.data) > 0 {
			t.Fatalf("chunk %d starts at line %d, says %d", i, want, c.line)
		}
		for rest := c.data; len(rest) > 0; {
			line := rest
			if j := bytes.IndexByte(rest, '\n'); j >= 0 {
				line = rest[:j+1]
			}
			if isSeparator(line) {
				t.Fatalf("chunk %d holds the separator line %q", i, line)
			}
			rest = rest[len(line):]
		}
		prev = start + len(c.data)
	}
	if prev != len(data) {
		t.Fatalf("last chunk ends at %d of %d", prev, len(data))
	}
	return chunks
}

// splitLoader is the loader FuzzSplitDocuments loads blank chunks with.
var splitLoader = sync.OnceValues(NewLoader)

// checkBlankLoadsNothing checks that the chunks the loader skips as blank
// (blankDocument) would have loaded nothing.
func checkBlankLoadsNothing(t *testing.T, chunks []chunk) {
	t.Helper()
	l, err := splitLoader()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range chunks {
		if !blankDocument(c.data) {
			continue
		}
		if r := l.loadDocument("f.yaml", c, nil); len(r.objs)+len(r.problems)+len(r.skipped) > 0 {
			t.Fatalf("chunk %d %q is skipped as blank but loads %d objects, problems %v, skipped %v", i, c.data, len(r.objs), r.problems, r.skipped)
		}
	}
}

// checkSplitLimits checks splitDocumentsAtMost at limits around the count.
func checkSplitLimits(t *testing.T, data []byte, all []chunk) {
	t.Helper()
	for _, limit := range []int{0, 1, len(all) - 1, len(all), len(all) + 1} {
		chunks, docs := splitDocumentsAtMost(data, limit)
		if docs != len(all) {
			t.Fatalf("limit %d: counted %d documents, want %d", limit, docs, len(all))
		}
		if over := len(all) > limit; over != (chunks == nil) || !over && !cmp.Equal(chunks, all, cmp.AllowUnexported(chunk{})) {
			t.Fatalf("limit %d of %d documents: chunks %v", limit, len(all), chunks)
		}
	}
}

// checkSplitLikeKubectl compares the non-empty chunks with the documents of
// kubectl's YAMLReader, which reads lines without "\r\n" and ends the last
// one with "\n", keeps the separator lines before a document's first line
// in it, and refuses "---" followed by anything but a comment.
func checkSplitLikeKubectl(t *testing.T, data []byte, chunks []chunk) {
	t.Helper()
	r := k8syaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var want []string
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return // a separator line with content: we read it as YAML
		}
		// A separator line read while no document has begun is kept as
		// the start of the next one (a YAML document start marker).
		for len(doc) > 0 {
			line, _, _ := bytes.Cut(doc, []byte("\n"))
			if !isSeparator(line) {
				break
			}
			doc = doc[len(line)+1:]
		}
		if len(doc) > 0 {
			want = append(want, string(doc))
		}
	}
	var got []string
	for _, c := range chunks {
		if len(c.data) > 0 {
			got = append(got, kubectlLines(c.data))
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("documents differ from kubectl's YAMLReader (-kubectl +ours):\n%s", diff)
	}
}

// kubectlLines is data as kubectl's LineReader returns its lines: "\r\n"
// ends read as "\n", and a last line without one gets "\n".
func kubectlLines(data []byte) string {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return s
}
