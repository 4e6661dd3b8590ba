package testkit

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine"
)

// TestOnlyTestsImport fails when a non-test Go file of the repository
// imports testkit or kubetest (the real kube-apiserver of the tests).
func TestOnlyTestsImport(t *testing.T) {
	testOnly := []string{"github.com/gwdev/gwdev/internal/testkit", "github.com/gwdev/gwdev/internal/kubetest"}
	fset := token.NewFileSet()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || (strings.HasPrefix(n, ".") && n != "." && n != "..") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); slices.Contains(testOnly, p) {
				t.Errorf("%s imports %s; only tests may", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestTranslate is the scaffold end to end: a Gateway and an HTTPRoute
// load and translate, and a load problem is reported as one.
func TestTranslate(t *testing.T) {
	res := Translate(t, "t.yaml", []byte(`apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: c
  listeners: [{name: http, protocol: HTTP, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: {name: c}
spec: {controllerName: gwdev.dev/gateway-controller}
`), engine.Options{})
	if len(res.Objects.Gateways) != 1 || res.Table == nil || len(res.Table.Gateways) != 1 {
		t.Fatalf("gateways %d, table %v", len(res.Objects.Gateways), res.Table)
	}
	if errs := ErrorFindings(res); len(errs) > 0 {
		t.Errorf("error findings: %q", errs)
	}
	lr := Project(t).LoadBytes("bad.yaml", []byte("kind: Oops\n"))
	if len(lr.Problems) == 0 {
		t.Error("a document without apiVersion loaded without a problem")
	}
}
