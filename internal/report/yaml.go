package report

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/engine"
)

// YAMLEncoder renders values as YAML, byte for byte as sigs.k8s.io/yaml
// does (see yamlemit.go), reusing its buffers from one value to the next.
// The zero value is ready to use; it is not safe for concurrent use.
type YAMLEncoder struct {
	tree jsonTree
	em   yamlEmitter
	buf  []byte
	// jbuf holds the JSON of the value being encoded, written by jenc
	// (nil until the first Encode): json.Marshal's copy per object was
	// 20 MB of garbage while check -o yaml wrote 10,000 HTTPRoutes with
	// their Services, the collector's work while its output is written.
	jbuf bytes.Buffer
	jenc *json.Encoder
}

// Encode returns the YAML of v. The bytes are valid until the next call.
func (e *YAMLEncoder) Encode(v any) ([]byte, error) {
	root, err := e.tree.build(v)
	if err == nil {
		e.em.out = e.buf[:0]
		if err = e.em.document(&e.tree, root); err == nil {
			e.buf = e.em.out[:0]
			return e.em.out, nil
		}
	}
	if err != errOutsideSubset {
		return nil, err
	}
	return e.encodeViaJSON(v)
}

// encodeViaJSON is Encode by way of encoding/json's text, for what build
// does not follow.
func (e *YAMLEncoder) encodeViaJSON(v any) ([]byte, error) {
	if e.jenc == nil {
		e.jenc = json.NewEncoder(&e.jbuf)
	}
	e.jbuf.Reset()
	if err := e.jenc.Encode(v); err != nil { // json.Marshal's text and a newline
		return nil, err
	}
	j := e.jbuf.Bytes()
	b, err := appendJSONYAML(&e.tree, &e.em, e.buf[:0], j[:len(j)-1])
	if err != nil {
		return nil, err
	}
	e.buf = b[:0]
	return b, nil
}

// YAML renders v as one YAML document, as sigs.k8s.io/yaml.Marshal does.
func YAML(v any) ([]byte, error) {
	var e YAMLEncoder
	return e.Encode(v)
}

// appendObjectYAML renders obj as YAML in buf's space: the fast emitter on
// encoding/json's text, or sigs.k8s.io/yaml for what is outside its subset.
func appendObjectYAML(tree *jsonTree, em *yamlEmitter, buf []byte, obj any) ([]byte, error) {
	j, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return appendJSONYAML(tree, em, buf, j)
}

// appendJSONYAML renders the JSON text j as YAML in buf's space, as
// appendObjectYAML does; nothing it returns refers to j.
func appendJSONYAML(tree *jsonTree, em *yamlEmitter, buf, j []byte) ([]byte, error) {
	root, err := tree.parse(j)
	if err == nil {
		em.out = buf
		if err = em.document(tree, root); err == nil {
			return em.out, nil
		}
	}
	if err != errOutsideSubset {
		return nil, err
	}
	return yaml.JSONToYAML(j)
}

// ResultYAML renders a result as one YAML document: every object with its
// status (Secret data redacted), the routing table, the findings and the
// policies' effects. It is the engine's golden format.
func ResultYAML(r *engine.Result) ([]byte, error) {
	var objs []any
	if err := r.EachOutput(func(o any) error { objs = append(objs, o); return nil }); err != nil {
		return nil, err
	}
	doc := struct {
		Objects  []any                 `json:"objects"`
		Table    *engine.Table         `json:"table"`
		Findings []engine.Finding      `json:"findings"`
		Policies []engine.PolicyEffect `json:"policies,omitempty"`
	}{objs, r.Table, r.Findings, r.Policies}
	return YAML(doc)
}

// WriteObjectsYAML writes every object with its status as a multi-document
// YAML stream, "---" before each, one object at a time, as `kubectl get -o
// yaml` users know it (`gwdev check -o yaml`, the admin API's /status).
// Secret data is redacted.
func WriteObjectsYAML(w io.Writer, res *engine.Result) error {
	var objs []any
	if err := res.EachOutput(func(obj any) error { objs = append(objs, obj); return nil }); err != nil {
		return err
	}
	return writeYAMLDocs(w, objs, yamlWorkers())
}

// ObjectsYAML is WriteObjectsYAML into memory.
func ObjectsYAML(res *engine.Result) ([]byte, error) {
	var buf bytes.Buffer
	err := WriteObjectsYAML(&buf, res)
	return buf.Bytes(), err
}

// ObjectYAML renders one object with its status for the dashboard, Secret
// data redacted, with apiVersion and kind at the top replaced by the given
// ones (the object may carry an older apiVersion it was converted from, or
// none) and without the final newline.
func ObjectYAML(obj metav1.Object, apiVersion, kind string) (string, error) {
	b, err := YAML(engine.RedactSecret(obj))
	if err != nil {
		return "", err
	}
	return withTypeMeta(strings.TrimSuffix(string(b), "\n"), apiVersion, kind), nil
}

// withTypeMeta puts apiVersion and kind at the top of an object's YAML,
// replacing the top-level ones it had.
func withTypeMeta(y, apiVersion, kind string) string {
	lines := strings.Split(y, "\n")
	out := make([]string, 0, len(lines)+2)
	out = append(out, "apiVersion: "+apiVersion, "kind: "+kind)
	for _, l := range lines {
		if strings.HasPrefix(l, "apiVersion: ") || strings.HasPrefix(l, "kind: ") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
