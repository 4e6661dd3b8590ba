package routetest

import (
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"encoding/json"

	"go.yaml.in/yaml/v4"

	"github.com/gwdev/gwdev/watch"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var englishPrinter = message.NewPrinter(language.English)

// jsonNumber is f as the validator's numbers (json.Number).
func jsonNumber(f float64) json.Number { return json.Number(strconv.FormatFloat(f, 'g', -1, 64)) }

// SchemaJSON is the JSON Schema of a test file (draft 2020-12), the one
// description of the format: Parse validates every file against it.
//
//go:embed gwdev-test.schema.json
var SchemaJSON []byte

// SchemaURL is the schema's $id.
const SchemaURL = "https://github.com/gwdev/gwdev/internal/routetest/gwdev-test.schema.json"

// Error is a test file that does not parse, or a case that cannot be
// checked, at file:line:column.
type Error struct {
	File         string
	Line, Column int
	Message      string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Message)
}

// Errors are the errors of one or more files.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Find lists the test files under path: path itself when it is a file,
// else every *.gwtest.yaml below it (dot-directories skipped), sorted.
func Find(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	var out []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != path && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && watch.IsRoutingTestName(d.Name()) {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

// ParseFile reads and parses one test file.
func ParseFile(path string) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, b)
}

// Parse parses a test file: YAML, validated against the schema (an
// unknown field, a wrong type or a missing one is an Error at its
// line:column), then decoded. The error is Errors.
func Parse(path string, b []byte) (*File, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, Errors{yamlError(path, err)}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, Errors{{File: path, Line: 1, Column: 1, Message: "empty test file: want cases:"}}
	}
	root := doc.Content[0]
	inst, err := nodeValue(root)
	if err != nil {
		return nil, Errors{{File: path, Line: root.Line, Column: root.Column, Message: err.Error()}}
	}
	sch, err := Schema()
	if err != nil {
		return nil, fmt.Errorf("the test file schema: %w", err)
	}
	if errs := sch.validate(inst); len(errs) > 0 {
		return nil, schemaErrors(path, root, errs)
	}
	f := &File{Path: path}
	if err := root.Load(f, yaml.WithKnownFields()); err != nil {
		return nil, Errors{yamlError(path, err)}
	}
	cases := mapValue(root, "cases")
	for i := range f.Cases {
		c := &f.Cases[i]
		if cases == nil || i >= len(cases.Content) {
			continue
		}
		n := cases.Content[i]
		c.Line, c.Column = n.Line, n.Column
		if c.Name == "" {
			c.Name = "case " + strconv.Itoa(i+1)
		}
		c.Lines, c.Columns = map[string]int{}, map[string]int{}
		if e := mapValue(n, "expect"); e != nil {
			fieldLines(e, "", c.Lines, c.Columns)
		}
		if u := mapValue(n, "request"); u != nil {
			if v := mapValue(u, "url"); v != nil {
				c.Lines["request.url"], c.Columns["request.url"] = v.Line, v.Column
			}
		}
	}
	return f, nil
}

// yamlError places a YAML syntax or decoding error.
func yamlError(path string, err error) *Error {
	var le *yaml.LoadErrors
	if errors.As(err, &le) && len(le.Errors) > 0 {
		e := le.Errors[0]
		return &Error{File: path, Line: e.Mark.Line, Column: e.Mark.Column, Message: e.Message}
	}
	var one *yaml.LoadError
	if errors.As(err, &one) {
		return &Error{File: path, Line: one.Mark.Line, Column: one.Mark.Column, Message: one.Message}
	}
	return &Error{File: path, Line: 1, Column: 1, Message: err.Error()}
}

// schemaErrors turns the schema's complaints into Errors at the line and
// column of the value each names, deepest first.
func schemaErrors(path string, root *yaml.Node, errs []schemaError) Errors {
	var out Errors
	seen := map[string]bool{}
	for _, e := range errs {
		n := nodeAt(root, e.location)
		msg := e.message
		if loc := strings.Join(e.location, "."); loc != "" {
			msg = loc + ": " + msg
		}
		// An unknown field is reported at the field itself.
		if e.unknown != "" {
			msg = "unknown field " + strconv.Quote(e.unknown)
			if loc := strings.Join(e.location, "."); loc != "" {
				msg += " in " + loc
			}
			if kn := mapKey(n, e.unknown); kn != nil {
				n = kn
			}
		}
		key := fmt.Sprint(n.Line, n.Column, msg)
		if !seen[key] {
			seen[key] = true
			out = append(out, &Error{File: path, Line: n.Line, Column: n.Column, Message: msg})
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Column < out[j].Column
	})
	return out
}

// nodeAt is the node at a JSON pointer's tokens (the deepest found).
func nodeAt(n *yaml.Node, loc []string) *yaml.Node {
	for _, tok := range loc {
		n = resolve(n)
		switch n.Kind {
		case yaml.MappingNode:
			v := mapValue(n, tok)
			if v == nil {
				return n
			}
			n = v
		case yaml.SequenceNode:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n.Content) {
				return n
			}
			n = n.Content[i]
		default:
			return n
		}
	}
	return n
}

func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

// mapValue is the value of key in a mapping node (nil: none).
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if k := mapKey(n, key); k != nil {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i] == k {
				return n.Content[i+1]
			}
		}
	}
	return nil
}

// mapKey is the key node of key in a mapping node (nil: none).
func mapKey(n *yaml.Node, key string) *yaml.Node {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

// fieldLines records the line of every key under n, by dotted path, and
// the column of its value.
func fieldLines(n *yaml.Node, prefix string, out, cols map[string]int) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		p := n.Content[i].Value
		if prefix != "" {
			p = prefix + "." + p
		}
		out[p], cols[p] = n.Content[i].Line, n.Content[i+1].Column
		fieldLines(n.Content[i+1], p, out, cols)
	}
}

// nodeValue is n as the JSON value the schema validates: mappings with
// string keys, sequences, and scalars by their YAML 1.2 core type.
func nodeValue(n *yaml.Node) (any, error) {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := nodeValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := nodeValue(c)
			if err != nil {
				return nil, err
			}
			s[i] = v
		}
		return s, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool":
			var b bool
			err := n.Decode(&b)
			return b, err
		case "!!int":
			var i int64
			if err := n.Decode(&i); err != nil {
				return nil, err
			}
			return jsonNumber(float64(i)), nil
		case "!!float":
			var f float64
			if err := n.Decode(&f); err != nil {
				return nil, err
			}
			if math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, fmt.Errorf("line %d: %s is not a number JSON has", n.Line, n.Value)
			}
			return jsonNumber(f), nil
		}
		return n.Value, nil
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}
