package routetest

import (
	"errors"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.yaml.in/yaml/v4"
)

// leaves are a validation's complaints as "location: message", sorted.
func referenceLeaves(t *testing.T, sch *jsonschema.Schema, v any) []string {
	t.Helper()
	err := sch.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		t.Fatal(err)
	}
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		out = append(out, strings.Join(e.InstanceLocation, ".")+": "+e.ErrorKind.LocalizedString(englishPrinter))
	}
	walk(ve)
	sort.Strings(out)
	return out
}

// The validator of schema.go answers as the JSON Schema library does,
// message for message at the same places, on every sample test file and
// on files broken in each way the schema's keywords catch.
func TestSchemaValidatorAgreesWithJSONSchema(t *testing.T) {
	ref := referenceSchema(t)
	sch, err := Schema()
	if err != nil {
		t.Fatal(err)
	}
	files, err := Find("../../samples")
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, f := range files {
		docs = append(docs, string(readFile(t, f)))
	}
	const req = `request: {url: "http://a:8080/"}`
	for _, c := range []string{
		`{cases: [{` + req + `, expect: {status: 200}, extra: 1}]}`, // unknown field
		`{cases: [{` + req + `, expect: {status: "200"}}]}`,         // wrong type
		`{cases: [{` + req + `}]}`,                                  // missing field
		`{cases: [{name: 1}]}`,                                      // wrong type, two missing
		`{cases: []}`,                                               // minItems
		`{cases: [{` + req + `, expect: {auth: {user: ""}}}]}`,      // minLength
		`{cases: [{` + req + `, expect: {auth: {user: "é"}}}]}`,     // minLength counts characters, not bytes
		`{cases: {}}`,                          // not an array
		`[]`,                                   // not an object
		`{}`,                                   // no cases
		`{cases: [{` + req + `, expect: {}}]}`, // minProperties
		`{cases: [{` + req + `, expect: {status: 99}}]}`,                   // minimum
		`{cases: [{` + req + `, expect: {status: 600}}]}`,                  // maximum
		`{cases: [{` + req + `, expect: {status: 200.5}}]}`,                // not an integer
		`{cases: [{` + req + `, expect: {status: 200.0}}]}`,                // an integer
		`{cases: [{` + req + `, expect: {route: {kind: Service}}}]}`,       // enum
		`{cases: [{` + req + `, expect: {route: {kind: 3}}}]}`,             // enum, a number
		`{cases: [{` + req + `, expect: {route: {rule: -1, match: -2}}}]}`, // minimum, twice
		`{cases: [{` + req + `, expect: {backend: {service: "a b"}}}]}`,    // pattern
		`{cases: [{request: {url: "http://a:8080/", method: "G T"}, expect: {refused: "yes"}}]}`,
		`{cases: [{request: {url: "http://a/", headers: {a: 1}}, expect: {responseHeaders: {a: null, b: 2}}}]}`,
		`{cases: [{request: {url: "http://a/", clientCert: {cert: x}}, expect: {refused: true}}]}`,
		`{cases: [{request: {url: "http://a/", count: 0}, expect: {refused: true}}]}`,
		`{cases: [{` + req + `, expect: {split: {shares: {"default/a": 2}}}}]}`,
		`{cases: [{` + req + `, expect: {split: {shares: {"default/a": 0.5}, count: 0, tolerance: -1}}}]}`,
		`{cases: [{` + req + `, expect: {rateLimit: {limited: 1}, mirrors: [1], auth: {asked: x}}}]}`,
		`{cases: [{` + req + `, expect: {reply: {body: 1}, location: 2, clientCert: {x: 1}}}]}`,
		`{cases: [{` + req + `, expect: {policies: [x, 1], grpcStatus: 1}}]}`,
		`{cases: [null, 1, "x", true]}`,
	} {
		docs = append(docs, c)
	}
	bad := 0
	for _, d := range docs {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(d), &n); err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		v, err := nodeValue(n.Content[0])
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		want := referenceLeaves(t, ref, v)
		var got []string
		for _, e := range sch.validate(v) {
			got = append(got, strings.Join(e.location, ".")+": "+e.message)
		}
		sort.Strings(got)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s:\ngot  %q\nwant %q", d, got, want)
		}
		if len(want) > 0 {
			bad++
		}
	}
	if bad < 25 {
		t.Errorf("only %d of the documents are invalid", bad)
	}
}

// compileSchema refuses a keyword the validator does not implement, so
// that the schema cannot use one that would not be checked.
func TestSchemaValidatorRefusesUnknownKeywords(t *testing.T) {
	for _, doc := range []string{
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "oneOf": [{"type": "object"}]}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "properties": {"a": {"maxLength": 3}}}`,
		`{"$schema": "https://json-schema.org/draft/2020-12/schema", "items": {"$ref": "#/$defs/none"}}`,
		`{"$schema": "http://json-schema.org/draft-07/schema#"}`,
	} {
		if _, err := compileSchema([]byte(doc)); err == nil {
			t.Errorf("compiles %s", doc)
		}
	}
	if _, err := compileSchema(SchemaJSON); err != nil {
		t.Errorf("the test file schema: %v", err)
	}
}
