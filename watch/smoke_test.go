package watch

import (
	"fmt"
	"sigs.k8s.io/yaml"
	"testing"
)

func TestSmoke(t *testing.T) {
	l, err := NewLoader()
	if err != nil {
		t.Fatal(err)
	}
	r := l.LoadDir("/tmp/smoke")
	for _, p := range r.Problems {
		fmt.Println(p)
	}
	for _, s := range r.Skipped {
		fmt.Println("skipped", s)
	}
	for k, v := range r.Snapshot.Sources {
		fmt.Println(k, v)
	}
	b, _ := yaml.Marshal(r.Snapshot.HTTPRoutes)
	fmt.Println(string(b))
	b, _ = yaml.Marshal(r.Snapshot.Services)
	fmt.Println(string(b))
}
