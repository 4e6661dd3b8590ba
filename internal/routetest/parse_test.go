package routetest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v4"
)

// The schema validates every sample test file (each read as the YAML it
// is, through a JSON Schema library directly, not through Parse) and
// rejects broken ones.
func TestSchemaValidatesSamples(t *testing.T) {
	sch := referenceSchema(t)
	files, err := Find("../../samples")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("only %d sample test files: %v", len(files), files)
	}
	for _, f := range files {
		var v any
		if err := yaml.Unmarshal(readFile(t, f), &v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if _, err := ParseFile(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, bad := range []string{
		`{cases: [{request: {url: "http://a:8080/"}, expect: {status: 200}, extra: 1}]}`,
		`{cases: [{request: {url: "http://a:8080/"}, expect: {status: "200"}}]}`,
		`{cases: [{request: {url: "http://a:8080/"}}]}`,
		`{cases: []}`,
		`{cases: [{request: {url: "http://a:8080/"}, expect: {split: {shares: {"default/a": 2}}}}]}`,
		`{cases: [{request: {url: "http://a:8080/"}, expect: {auth: {basic: maybe}}}]}`,
		`{cases: [{request: {url: "http://a:8080/"}, expect: {auth: {user: ""}}}]}`,
	} {
		var v any
		if err := yaml.Unmarshal([]byte(bad), &v); err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); err == nil {
			t.Errorf("the schema accepts %s", bad)
		}
	}
}

// referenceSchema is SchemaJSON compiled by a JSON Schema library (in
// tests only: its init weighs 1.7 MB, issue 42).
func referenceSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(SchemaJSON)))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(SchemaURL, doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(SchemaURL)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Parse names file:line:column for an unknown field, a wrong type, a
// missing field and a YAML syntax error.
func TestParseErrorsNameLineColumn(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"cases:\n- request: {url: http://a:8080/, bogus: 1}\n  expect: {status: 200}\n", `t.gwtest.yaml:2:34: unknown field "bogus" in cases.0.request`},
		{"cases:\n- request: {url: http://a:8080/}\n  expect:\n    status: \"200\"\n", "t.gwtest.yaml:4:13: cases.0.expect.status: got string, want integer"},
		{"cases:\n- request: {url: http://a:8080/}\n", "t.gwtest.yaml:2:3: cases.0: missing property 'expect'"},
		{"cases: [\n", "t.gwtest.yaml:2:1:"},
		{"cases:\n- request: {url: http://a:8080/}\n  expect: {route: {rule: one}}\n", "t.gwtest.yaml:3:26: cases.0.expect.route.rule: got string, want integer"},
	} {
		_, err := Parse("t.gwtest.yaml", []byte(tc.in))
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %s…", tc.in, err, tc.want)
		}
	}
	f, err := Parse("t.gwtest.yaml", []byte("cases:\n- name: n\n  request: {url: http://a:8080/}\n  expect:\n    status: 200\n    received:\n      path: /x\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := f.Cases[0]
	if c.Line != 2 || c.Lines["status"] != 5 || c.Lines["received.path"] != 7 || c.Expect.Status != 200 || c.Expect.Received.Path != "/x" {
		t.Errorf("case %+v", c)
	}
	if got := filepath.Base(f.Path); got != "t.gwtest.yaml" {
		t.Error(got)
	}
}
