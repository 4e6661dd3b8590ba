package watch

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
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

// nestedMappings is n mappings, each the value of the one before.
func nestedMappings(n int) string {
	var b strings.Builder
	for i := range n - 1 {
		b.WriteString(strings.Repeat(" ", i) + "a:\n")
	}
	b.WriteString(strings.Repeat(" ", n-1) + "a: b\n")
	return b.String()
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

	{"a: |\n  text\n", true},
	{"a: |\n  text", true},
	{"a: |-\n  one\n\n   two\n  # not a comment\n\n\nb: c\n", true},
	{"a: |+\n  one\n\n\nb: c\n", true},
	{"a: | # header comment\n  x\n# comment\n", true},
	{"- |\n  x\n- |\n   y\n", true},
	{"- k: |\n    x\n  j: y\n", true},
	{"a: |\nb: c\n", false},
	{"a: |2\n   x\n", false},
	{"a: |\n\n  x\n", false},
	{"a: |\n  x\n     \n", false},
	{"a: >\n  text\n", false},
	{"a: &x b\nc: *x\n", false},
	{"a: !!str 1\n", false},
	{"a: \"b\\nc\"\n", true},
	{`a: "/files/.*\\.pdf"` + "\n", true},
	{`a: ["x\"y", "\/z", "t\tu"]` + "\n", true},
	{`"k\\ey": "v"` + "\n", true},
	{`a: "\u00e9"` + "\n", false},
	{`a: "\x41"` + "\n", false},
	{`a: "b\` + "\n  c\"\n", false},
	{`a: "b\`, false},
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
	{"x: " + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + "\n", false},
	{nestedMappings(maxFastDepth), true},
	{nestedMappings(maxFastDepth + 1), false},
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

// yamlGen writes random documents inside fastParse's subset, in the many
// ways people indent, quote and comment manifests.
type yamlGen struct {
	r *rand.Rand
	b strings.Builder
}

var (
	genKeys    = []string{"name", "namespace", "port", "value", "type", "a b", "x-y", "a.b/c", "<<x", "-k", "k:v", "é"}
	genScalars = []string{"web", "8080", "-1", "1.5", "~", "null", "yes", "No", "a b", "a#b", "http://x:80/p", "a:b", "/api/v1",
		"*.example.com", "[x]y", "x]", "{x", "véloc€", "!x", "a  b", "0x1F", "1e3", "-x", "?x", ":x", "%", "'", "\"",
		`\.pdf`, `(a)\1`}
)

func (g *yamlGen) pick(s []string) string { return s[g.r.IntN(len(s))] }

func (g *yamlGen) line(indent int, text string) {
	if g.r.IntN(8) == 0 {
		g.b.WriteString(strings.Repeat(" ", g.r.IntN(6)) + "# note: a: b\n")
	}
	if g.r.IntN(10) == 0 {
		g.b.WriteString("\n")
	}
	g.b.WriteString(strings.Repeat(" ", indent) + text)
	if g.r.IntN(6) == 0 {
		g.b.WriteString(" # trailing")
	}
	g.b.WriteString("\n")
}

// key renders a mapping key (plain or quoted).
func (g *yamlGen) key() string {
	k := g.pick(genKeys)
	switch g.r.IntN(6) {
	case 0:
		return "'" + strings.ReplaceAll(k, "'", "''") + "'"
	case 1:
		return `"` + k + `"`
	}
	if strings.Contains(k, ":") || k == "-k" {
		return "'" + k + "'"
	}
	return k
}

// scalar renders an inline scalar valid in block context.
func (g *yamlGen) scalar(flow bool) string {
	s := g.pick(genScalars)
	needsQuote := s == "'" || s == `"` || s == "%" || strings.HasPrefix(s, "!") || strings.HasPrefix(s, "*") ||
		strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{") || strings.Contains(s, "#") && strings.Contains(s, " #") ||
		(flow && strings.ContainsAny(s, ",[]{}:#"))
	switch q := g.r.IntN(5); {
	case q == 0 || (needsQuote && q%2 == 0):
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	case q == 1 || needsQuote:
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "/", g.pick([]string{"/", `\/`})).Replace(s) + `"`
	}
	return s
}

// flowValue renders a flow collection of limited depth.
func (g *yamlGen) flowValue(depth int) string {
	n := g.r.IntN(4)
	sp := strings.Repeat(" ", g.r.IntN(2))
	var items []string
	isMap := g.r.IntN(2) == 0
	for range n {
		var v string
		if depth < 2 && g.r.IntN(4) == 0 {
			v = g.flowValue(depth + 1)
		} else {
			v = g.scalar(true)
		}
		if isMap {
			k := g.pick([]string{"a", "b", "name", "'q k'", `"d"`})
			v = k + ": " + v
		}
		items = append(items, v)
	}
	body := strings.Join(items, ","+sp+" ")
	if isMap {
		return "{" + sp + body + sp + "}"
	}
	return "[" + sp + body + sp + "]"
}

// inline renders a value that fits on its line.
func (g *yamlGen) inline() string {
	if g.r.IntN(5) == 0 {
		return g.flowValue(0)
	}
	return g.scalar(false)
}

func (g *yamlGen) mapping(indent, depth int, first string) {
	n := 1 + g.r.IntN(4)
	for i := range n {
		prefix := strings.Repeat(" ", indent)
		if i == 0 && first != "" {
			prefix = first
		}
		k := g.key() + strings.Repeat(" ", g.r.IntN(2)) + ":"
		if g.r.IntN(8) == 0 {
			g.emit(prefix, k+" "+g.literalHeader())
			g.literalBody(indent)
			continue
		}
		if depth < 4 && g.r.IntN(3) == 0 {
			g.emit(prefix, k)
			g.block(indent, depth+1)
			continue
		}
		g.emit(prefix, k+" "+g.inline())
	}
}

func (g *yamlGen) sequence(indent, depth int) {
	n := 1 + g.r.IntN(3)
	for range n {
		dash := strings.Repeat(" ", indent) + "-" + strings.Repeat(" ", 1+g.r.IntN(3))
		if g.r.IntN(8) == 0 {
			g.emit(dash, g.literalHeader())
			g.literalBody(indent)
			continue
		}
		if depth < 4 && g.r.IntN(2) == 0 {
			g.mapping(len(dash), depth+1, dash)
			continue
		}
		g.emit(dash, g.inline())
	}
}

// literalHeader renders "|" with a chomping indicator and a comment.
func (g *yamlGen) literalHeader() string {
	h := g.pick([]string{"|", "|-", "|+"})
	if g.r.IntN(4) == 0 {
		h += " # header"
	}
	return h
}

// literalBody writes the lines of a literal scalar under a node at parent:
// text (that may look like YAML), inner blank lines, deeper lines.
func (g *yamlGen) literalBody(parent int) {
	indent := parent + 1 + g.r.IntN(3)
	n := 1 + g.r.IntN(4)
	for i := range n {
		if i > 0 && g.r.IntN(4) == 0 {
			g.b.WriteString(strings.Repeat(" ", g.r.IntN(indent+1)) + "\n")
		}
		extra := 0
		if i > 0 && g.r.IntN(4) == 0 {
			extra = 1 + g.r.IntN(3)
		}
		g.b.WriteString(strings.Repeat(" ", indent+extra) + g.pick([]string{"text", "# not a comment", "- item", "a: b", "-----BEGIN X-----", "'q'", "é ü"}) + "\n")
	}
	for range g.r.IntN(3) {
		g.b.WriteString("\n")
	}
}

// block writes the value of a key at indent: a nested mapping or a
// sequence (possibly at the key's own indentation).
func (g *yamlGen) block(indent, depth int) {
	switch g.r.IntN(3) {
	case 0:
		g.mapping(indent+1+g.r.IntN(4), depth, "")
		return
	case 1:
		g.sequence(indent, depth)
	default:
		g.sequence(indent+1+g.r.IntN(3), depth)
	}
}

// emit writes prefix+text as a line (prefix carries the indentation).
func (g *yamlGen) emit(prefix, text string) {
	g.line(0, prefix+text)
}

func TestFastParseRandomDocuments(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		g := &yamlGen{r: r}
		if i%4 == 0 {
			g.sequence(g.r.IntN(2), 0)
		} else {
			g.mapping(g.r.IntN(3), 0, "")
		}
		text := g.b.String()
		if !checkFastParse(t, []byte(text)) {
			if _, err := referenceParse([]byte(text)); err != nil {
				t.Fatalf("generator wrote invalid YAML (%v):\n%s", err, text)
			}
			t.Fatalf("fastParse gave up on a document inside its subset:\n%s", text)
		}
	}
}
