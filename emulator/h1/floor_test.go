package h1

import (
	"go/build"
	"strings"
	"testing"
)

// h1 stands below the data plane: its files import the standard library,
// x/net's httpguts and emulator/internal/wire only, never package emulator
// (which imports h1).
func TestImportsStayBelowTheDataPlane(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	allowed := map[string]bool{
		"golang.org/x/net/http/httpguts":                true,
		"github.com/gwdev/gwdev/emulator/internal/wire": true,
	}
	for _, imp := range pkg.Imports {
		first, _, _ := strings.Cut(imp, "/")
		if strings.Contains(first, ".") && !allowed[imp] {
			t.Errorf("package h1 imports %s", imp)
		}
	}
}
