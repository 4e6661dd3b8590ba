package watch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v4"
)

// referenceParse parses data with go.yaml.in/yaml/v4, as loadDocument did
// before fastParse: every document of the text, or the error.
func referenceParse(data []byte) ([]*yaml.Node, error) {
	dec, err := yaml.NewLoader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Load(&n)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, &n)
	}
}

// sameTree compares the fields the loader reads.
func sameTree(fast, ref *yaml.Node, path string) error {
	if fast.Kind != ref.Kind {
		return fmt.Errorf("%s: kind %v, reference %v", path, fast.Kind, ref.Kind)
	}
	if fast.Kind != yaml.DocumentNode {
		if fast.Style != ref.Style {
			return fmt.Errorf("%s: style %v, reference %v", path, fast.Style, ref.Style)
		}
		if fast.Value != ref.Value {
			return fmt.Errorf("%s: value %q, reference %q", path, fast.Value, ref.Value)
		}
		if fast.Line != ref.Line || fast.Column != ref.Column {
			return fmt.Errorf("%s (%q): at %d:%d, reference %d:%d", path, fast.Value, fast.Line, fast.Column, ref.Line, ref.Column)
		}
	}
	if ref.Alias != nil || ref.Anchor != "" {
		return fmt.Errorf("%s: the reference has an anchor or alias", path)
	}
	if len(fast.Content) != len(ref.Content) {
		return fmt.Errorf("%s: %d children, reference %d", path, len(fast.Content), len(ref.Content))
	}
	for i := range fast.Content {
		if err := sameTree(fast.Content[i], ref.Content[i], fmt.Sprintf("%s/%d", path, i)); err != nil {
			return err
		}
	}
	return nil
}

// checkFastParse fails when fastParse accepts data and disagrees with the
// reference parser. It returns whether fastParse accepted.
func checkFastParse(t *testing.T, data []byte) bool {
	t.Helper()
	doc, ok := fastParse(data)
	if !ok {
		return false
	}
	ref, err := referenceParse(data)
	if err != nil {
		t.Fatalf("fastParse accepted text the reference rejects (%v):\n%s", err, data)
	}
	if doc == nil {
		if len(ref) != 0 {
			t.Fatalf("fastParse found no document, the reference %d:\n%s", len(ref), data)
		}
		return true
	}
	if len(ref) != 1 {
		t.Fatalf("fastParse found one document, the reference %d:\n%s", len(ref), data)
	}
	if err := sameTree(doc, ref[0], ""); err != nil {
		t.Fatalf("fastParse disagrees with the reference: %v\n%s", err, data)
	}
	return true
}

// fastParseCases are texts inside and outside the subset; accepted says
// which.
var fastParseCases = []struct {
	text     string
	accepted bool
}{
	{"", true},
	{"# only a comment\n\n", true},
	{"a: b\n", true},
	{"a: b", true},
	{"  a: b\n  c: d\n", true},
	{"a:\n  b: c\n  d:\n  - e\n  - f: g\n    h: i\n", true},
	{"a:\n- b\n- c\nd: e\n", true},
	{"a: [b, c, {d: e}]\nf: {g: h, i: [j]}\n", true},
	{"a: []\nb: {}\n", true},
	{"a: [b, ]\n", true},
	{"'a b': 'it''s'\n\"c\": \"d e\"\n", true},
	{"a: b # comment\n# comment\nc: d #x\n", true},
	{"a: http://x:80/y#z\n", true},
	{"a: b:c\n", true},
	{"a : b\n", true},
	{"- a\n- b: c\n  d: e\n-   f: g\n", true},
	{"a: -1\nb: -x\nc: ~\nd: yes\ne: 1.5\n", true},
	{"a:\n    - b\n    - c\n", true},
	{"a: {\"b\": \"c\"}\n", true},
	{"a: {b: c}   # trailing\n", true},
	{"a: b\na: c\n", true}, // duplicate keys are the converter's business

	{"a: |\n  text\n", false},
	{"a: >\n  text\n", false},
	{"a: &x b\nc: *x\n", false},
	{"a: !!str 1\n", false},
	{"a: \"b\\nc\"\n", false},
	{"a: b\n  c\n", false},
	{"a:\n", false},
	{"a:\nb: c\n", false},
	{"a: b: c\n", false},
	{"a:\tb\n", false},
	{"a: b\r\n", false},
	{"a: caf\xc3\xa9\n", true},
	{"# r\xc3\xa9sum\xc3\xa9 \xe2\x86\x92 x\n\xc3\xa9: [\xc3\xa9, b]\nc: {\xc3\xa9: d}\n", true},
	{"a: b\xe2\x80\xa8c\n", false},
	{"\xef\xbb\xbfa: b\n", false},
	{"a: \xff\n", false},
	{"--- a\n", false},
	{"%YAML 1.2\n---\na: b\n", false},
	{"? a\n: b\n", false},
	{"a: [b,\n  c]\n", false},
	{"a: - b\n", false},
	{"- - a\n", false},
	{"-\n  a: b\n", false},
	{"a: 'b\n", false},
	{"a: {b}\n", false},
	{"a: [b: c]\n", false},
	{"a: {b:c}\n", false},
	{"scalar\n", false},
	{"a: b\n- c\n", false},
	{"a:\n  b: c\n d: e\n", false},
	{"a: 'b'c\n", false},
	{"a: b\n...\n", false},
}

func TestFastParseAgreesWithReference(t *testing.T) {
	for _, c := range fastParseCases {
		if got := checkFastParse(t, []byte(c.text)); got != c.accepted {
			t.Errorf("fastParse accepted=%v, want %v, for:\n%s", got, c.accepted, c.text)
		}
	}
}

// TestFastParseCoversManifests checks the repository's manifests: every
// document fastParse accepts agrees with the reference, and the generated
// benchmark manifests and the samples are inside the subset (otherwise
// the speed-up silently disappears).
func TestFastParseCoversManifests(t *testing.T) {
	var docs, accepted int
	walk := func(root string, mustAccept bool) {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !(strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, c := range splitDocuments(data) {
				docs++
				ok := checkFastParse(t, c.data)
				if ok {
					accepted++
				} else if mustAccept {
					t.Errorf("%s:%d: outside the fast subset:\n%s", path, c.line, c.data)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	walk("../samples", false)
	walk("../engine/testdata", false)
	walk("testdata", false)
	walk("../cmd/gwdev/testdata", false)
	dir := t.TempDir()
	writeRoutes(t, dir, 20)
	if err := os.WriteFile(filepath.Join(dir, "flow.yaml"), []byte(flowStyleRoutes), 0o644); err != nil {
		t.Fatal(err)
	}
	walk(dir, true)
	t.Logf("%d of %d documents parsed by fastParse", accepted, docs)
}

// flowStyleRoutes is written like bench/genroutes writes its routes.
const flowStyleRoutes = `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app-1, namespace: team-1}
spec:
  parentRefs: [{name: shared, namespace: infra}]
  hostnames: [app-1.example.com]
  rules:
  - matches:
    - path: {type: PathPrefix, value: /api/v1}
      headers: [{name: x-canary, value: "true"}]
    filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: x-route, value: app-1}]}
    backendRefs:
    - {name: app-1, port: 8080, weight: 90}
  - matches:
    - path: {type: PathPrefix, value: /}
    backendRefs:
    - {name: app-1, port: 8080}
---
apiVersion: v1
kind: Service
metadata: {name: app-1, namespace: team-1}
spec:
  ports: [{port: 8080, targetPort: 8080}]
`

func FuzzFastParse(f *testing.F) {
	for _, c := range fastParseCases {
		f.Add([]byte(c.text))
	}
	for _, glob := range []string{"../samples/*/*.yaml", "../engine/testdata/*.in.yaml"} {
		files, _ := filepath.Glob(glob)
		for i, file := range files {
			if i%8 != 0 && strings.Contains(glob, "engine") {
				continue // a spread of the golden inputs is enough
			}
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			for _, c := range splitDocuments(data) {
				f.Add(c.data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastParse(t, data)
	})
}
