package watch

import (
	"testing"

	yaml "go.yaml.in/yaml/v4"
)

func parseForTest(t testing.TB, s string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Load([]byte(s), &n); err != nil {
		t.Fatal(err)
	}
	return deref(&n)
}
