package watch

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestManifestFilesSplitAtTheDocumentLimit: pulled objects are split into
// files the loader takes by document count as well as by size: one more
// object than MaxFileDocuments (each tiny, far under the byte limit) makes
// two files, and every file loads without a problem.
func TestManifestFilesSplitAtTheDocumentLimit(t *testing.T) {
	objs := make([]*unstructured.Unstructured, MaxFileDocuments+1)
	for i := range objs {
		objs[i] = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "c", "namespace": "default"}}}
	}
	files, err := ManifestFiles(objs, MaxFileSize)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Objects != MaxFileDocuments || files[1].Objects != 1 {
		counts := []int{}
		for _, f := range files {
			counts = append(counts, f.Objects)
		}
		t.Fatalf("%d objects made files of %v objects, want [%d 1]", len(objs), counts, MaxFileDocuments)
	}
	if n := len(splitDocuments(files[0].Data)); n > MaxFileDocuments {
		t.Errorf("the first file has %d documents, over the loader's %d", n, MaxFileDocuments)
	}
}
