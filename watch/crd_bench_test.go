package watch

import "testing"

// newCRDSet returns a crdSet of its own, with nothing compiled yet.
func newCRDSet() *crdSet {
	s := &crdSet{files: map[string]*crdFile{}}
	for _, k := range allKinds {
		if k.crd != "" {
			s.files[k.crd] = &crdFile{name: k.crd}
		}
	}
	return s
}

// BenchmarkCRDSetupHTTPRoute measures the one-time cost of the biggest
// CRD: decoding the embedded schema and compiling it, CEL rules included
// (the shared CEL base environment is built once, before the timer).
func BenchmarkCRDSetupHTTPRoute(b *testing.B) {
	if _, err := celBaseEnv(); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := newCRDSet().schema(kindHTTPRoute.crd, "v1"); err != nil {
			b.Fatal(err)
		}
	}
}
