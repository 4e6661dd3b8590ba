package watch

import (
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
)

// TestEditedFileKeepsUnchangedObjects: editing one object of a file keeps
// the pointers of the file's other objects when they are equal and at the
// same place (the engine's incremental reload tells unchanged objects by
// pointer), and gives a new object for the edited one and for every one
// whose place moved.
func TestEditedFileKeepsUnchangedObjects(t *testing.T) {
	dir, w := rescanWatcher(t)
	file := filepath.Join(dir, "app.yaml")
	doc := func(hostA string) string {
		return strings.Join([]string{
			"apiVersion: v1\nkind: Service\nmetadata: {name: svc}\nspec: {ports: [{port: 80}]}\n",
			"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: a}\nspec:\n  hostnames: [" + hostA + "]\n  rules: [{backendRefs: [{name: svc, port: 80}]}]\n",
			"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata: {name: b}\nspec:\n  hostnames: [b.example.com]\n  rules: [{backendRefs: [{name: svc, port: 80}]}]\n",
		}, "---\n")
	}
	objects := func() map[string]metav1.Object {
		w.rescan(nil, false, RootSteady)
		w.mu.Lock()
		defer w.mu.Unlock()
		out := map[string]metav1.Object{}
		w.current.Result.Snapshot.Each(func(k engine.ObjectKey, o metav1.Object) { out[k.Name] = o })
		if len(out) != 3 {
			t.Fatalf("want 3 objects, have %d", len(out))
		}
		return out
	}
	writeNow(t, file, doc("a.example.com"))
	first := objects()

	writeNow(t, file, doc("a2.example.com")) // the route a edited in place
	second := objects()
	if second["svc"] != first["svc"] || second["b"] != first["b"] {
		t.Error("the Service and route b did not change, but are new objects")
	}
	if second["a"] == first["a"] {
		t.Error("route a changed, but is the old object")
	}

	writeNow(t, file, "# a comment moves every object down a line\n"+doc("a2.example.com"))
	third := objects()
	for name, o := range third {
		if o == second[name] {
			t.Errorf("%s moved a line down, but is the old object (its source would be stale)", name)
		}
	}

	writeNow(t, file, "# a comment moves every object down a line\n"+doc("a2.example.com")) // saved unchanged
	for name, o := range objects() {
		if o != third[name] {
			t.Errorf("%s: saved unchanged, but a new object", name)
		}
	}
}
