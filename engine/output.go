package engine

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// kubeObject is what every object in a Snapshot is.
type kubeObject interface {
	metav1.Object
	runtime.Object
}

// EachOutput calls fn for every object with its status, in the order of
// Each, Secret data redacted, and stops at the first error fn returns. It
// is what every output of objects renders (internal/report: `gwdev check
// -o yaml|json`, the golden files, the admin API), one object at a time.
func (r *Result) EachOutput(fn func(obj any) error) error {
	var err error
	r.Objects.Each(func(_ ObjectKey, o metav1.Object) {
		if err == nil {
			err = fn(redact(o))
		}
	})
	return err
}
