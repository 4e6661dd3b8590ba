package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// aliasBombYAML is nine levels of mappings of nine aliases to the level
// below (387 million leaves once expanded), under a top-level key.
func aliasBombYAML(key string) string {
	var b strings.Builder
	b.WriteString(key + ":\n  a: &a {k1: lol, k2: lol, k3: lol, k4: lol, k5: lol, k6: lol, k7: lol, k8: lol, k9: lol}\n")
	prev := "a"
	for _, n := range "bcdefghi" {
		keys := make([]string, 9)
		for j := range keys {
			keys[j] = fmt.Sprintf("k%d: *%s", j+1, prev)
		}
		fmt.Fprintf(&b, "  %c: &%c {%s}\n", n, n, strings.Join(keys, ", "))
		prev = string(n)
	}
	return b.String()
}

// TestAliasBombEveryFile: the same alias bomb in a manifest and in
// gwdev.yaml is refused quickly with file:line:column.
func TestAliasBombEveryFile(t *testing.T) {
	t.Run("manifest", func(t *testing.T) {
		dir := t.TempDir()
		manifest := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb}\n" + aliasBombYAML("data")
		if err := os.WriteFile(filepath.Join(dir, "bomb.yaml"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		out, _, code := runGwdev(t, "", "check", dir)
		took := time.Since(start)
		if code != exitProblems || !strings.Contains(out, "bomb.yaml:8:38: ConfigMap/bomb: yaml: excessive aliasing: *c expands to") {
			t.Errorf("exit %d, output:\n%s", code, out)
		}
		if took > 3*time.Second {
			t.Errorf("took %s", took)
		}
	})
	t.Run("gwdev.yaml", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "gwdev.yaml"), []byte(aliasBombYAML("backends")), 0o644); err != nil {
			t.Fatal(err)
		}
		_, errOut, code := runGwdev(t, "", "check", dir)
		if code != exitUsage || !strings.Contains(errOut, "gwdev.yaml:5:38: yaml: excessive aliasing: *c expands to") {
			t.Errorf("exit %d, stderr:\n%s", code, errOut)
		}
	})
}
