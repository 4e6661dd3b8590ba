package engine

import (
	"bytes"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// kubeObject is what every object in a Snapshot is.
type kubeObject interface {
	metav1.Object
	runtime.Object
}

// MarshalYAML renders the result as one YAML document: every object with
// its status, the routing table, the findings and the policies' effects.
// It is the golden format.
func (r *Result) MarshalYAML() ([]byte, error) {
	var objs []any
	r.Objects.Each(func(_ ObjectKey, o metav1.Object) { objs = append(objs, redact(o)) })
	doc := struct {
		Objects  []any          `json:"objects"`
		Table    *Table         `json:"table"`
		Findings []Finding      `json:"findings"`
		Policies []PolicyEffect `json:"policies,omitempty"`
	}{objs, r.Table, r.Findings, r.Policies}
	return yaml.Marshal(doc)
}

// EachOutput calls fn for every object with its status, in the order of
// Each, Secret data redacted, and stops at the first error fn returns. It
// is what `gwdev check -o yaml|json` prints, one object at a time.
func (r *Result) EachOutput(fn func(obj any) error) error {
	var err error
	r.Objects.Each(func(_ ObjectKey, o metav1.Object) {
		if err == nil {
			err = fn(redact(o))
		}
	})
	return err
}

// ObjectsYAML renders every object with its status as a multi-document YAML
// stream, as `kubectl get -o yaml` users know it. Secret data is redacted.
func (r *Result) ObjectsYAML() ([]byte, error) {
	var buf bytes.Buffer
	var err error
	r.Objects.Each(func(_ ObjectKey, o metav1.Object) {
		if err != nil {
			return
		}
		var b []byte
		b, err = yaml.Marshal(redact(o))
		buf.WriteString("---\n")
		buf.Write(b)
	})
	return buf.Bytes(), err
}

// ObjectsJSONItems returns every object with its status, Secrets redacted,
// ready to be encoded as the items of a List.
func (r *Result) ObjectsJSONItems() ([]any, error) {
	var items []any
	r.Objects.Each(func(_ ObjectKey, o metav1.Object) { items = append(items, redact(o)) })
	return items, nil
}
