package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProblemKinds: the loader tags each problem with what it found, where
// it finds it, so Hint explains it without reading the message.
func TestProblemKinds(t *testing.T) {
	const gw = "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: gw}\n"
	for name, c := range map[string]struct {
		doc  string
		want ProblemKind
	}{
		"yaml":          {"a: [b\n", ProblemYAML},
		"required":      {gw + "spec: {listeners: [{name: a, protocol: HTTP, port: 80}]}\n", ProblemRequired},
		"unsupported":   {gw + "spec: {gatewayClassName: c, listeners: [{name: a, protocol: HTTP, port: 80, allowedRoutes: {namespaces: {from: Some}}}]}\n", ProblemUnsupported},
		"unknown field": {gw + "spec: {gatewayClassName: c, listeners: [{name: a, protocol: HTTP, port: 80}], nope: 1}\n", ProblemUnknownField},
		"invalid":       {gw + "spec: {gatewayClassName: c, listeners: [{name: a, protocol: HTTP, port: 0}]}\n", ProblemInvalid},
		"no kind":       {"apiVersion: v1\nmetadata: {name: x}\n", ProblemRequired},
		"not an object": {"- a\n- b\n", ProblemHeader},
		"version":       {"apiVersion: gateway.networking.k8s.io/v9\nkind: Gateway\nmetadata: {name: gw}\n", ProblemHeader},
		"defined twice": {gw + "spec: {gatewayClassName: c, listeners: [{name: a, protocol: HTTP, port: 80}]}\n---\n" +
			gw + "spec: {gatewayClassName: c, listeners: [{name: a, protocol: HTTP, port: 80}]}\n", ProblemAlreadyDefined},
	} {
		lr := newTestLoader(t).LoadBytes("f.yaml", []byte(c.doc))
		if len(lr.Problems) == 0 {
			t.Errorf("%s: no problem", name)
			continue
		}
		found := false
		for _, p := range lr.Problems {
			if p.Kind == c.want {
				found = true
				if p.Hint() != problemHints[c.want] {
					t.Errorf("%s: Hint %q", name, p.Hint())
				}
			}
		}
		if !found {
			t.Errorf("%s: no %s problem in %v", name, c.want, lr.Problems)
		}
	}
}

// TestProblemKindsOfFiles: files that cannot be read, are binary or too
// large, and symlinks that loop.
func TestProblemKindsOfFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("bin.yaml", []byte{0xff, 0xfe, 0x00, 0x01})
	write("big.yaml", []byte(strings.Repeat("#", MaxFileSize+1)))
	if err := os.Symlink("loop.yaml", filepath.Join(dir, "loop.yaml")); err != nil {
		t.Fatal(err)
	}
	got := map[ProblemKind]bool{}
	for _, p := range newTestLoader(t).LoadDir(dir).Problems {
		got[p.Kind] = true
		if p.Kind == "" {
			t.Errorf("no kind: %s", p.Message)
		}
	}
	for _, k := range []ProblemKind{ProblemBinary, ProblemTooLarge, ProblemSymlink} {
		if !got[k] {
			t.Errorf("no %s problem (got %v)", k, got)
		}
	}
}

// TestProblemHints: every kind has a hint; Root and Pruned come first; a
// problem of no kind gets the general hint.
func TestProblemHints(t *testing.T) {
	for _, k := range []ProblemKind{ProblemYAML, ProblemNotServed, ProblemRequired, ProblemUnsupported, ProblemUnknownField,
		ProblemInvalid, ProblemTooMany, ProblemDuplicate, ProblemAlreadyDefined, ProblemUnreadable, ProblemBinary,
		ProblemTooLarge, ProblemSymlink, ProblemHeader} {
		if problemHints[k] == "" {
			t.Errorf("%s: no hint", k)
		}
	}
	if got := (Problem{Root: true, Kind: ProblemUnreadable}).Hint(); got != rootHint {
		t.Errorf("root: %q", got)
	}
	if got := (Problem{Pruned: true, Kind: ProblemUnknownField}).Hint(); got != prunedHint {
		t.Errorf("pruned: %q", got)
	}
	if got := (Problem{Message: "apiVersion: Required value"}).Hint(); got != otherHint {
		t.Errorf("no kind: %q (the message is not read)", got)
	}
}
