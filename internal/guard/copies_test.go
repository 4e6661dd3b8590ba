package guard

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The front ends (tui, cmd/gwdev) read the application's types — the
// Session's State, load problems, findings, the migration comparison —
// and keep no copy of them: a copy is a second meaning of the same fact
// that drifts (issue 36: tui/msg.go kept LoadProblem, StaleObject and the
// migration types, and cmd/gwdev copied into them field by field).

// typeOwners are the packages (folders from the module root) whose
// exported struct types the front ends must use, not copy.
var typeOwners = []string{"watch", "engine", "engine/table", "engine/ingressnginx", "engine/gwin",
	"emulator", "internal/app", "internal/project", "internal/report"}

// frontEnds are the packages that must not copy them.
var frontEnds = []string{"tui", "cmd/gwdev"}

// removedCopies are the front ends' copies issue 36 removed, by name:
// none comes back under its old name whatever its fields.
var removedCopies = map[string]string{
	"StateMsg":            "app.State",
	"LoadProblem":         "watch.Problem",
	"StaleObject":         "watch.StaleObject",
	"MigrationMsg":        "app.MigrationState",
	"MigrationDifference": "report.CompareDifference",
	"MigrationField":      "report.CompareDifference's Fields and CompareAnswer.Field",
	"MigrationDropped":    "ingressnginx.DroppedFeature",
}

// copyShare is the share of a struct's fields that, found with the same
// name and type in one owner's struct, make it a copy (at least
// copyMinFields of them).
const (
	copyShare     = 0.75
	copyMinFields = 3
)

// structType is a struct type declared in a package: its fields as
// "Name Type", the type written with its package's name.
type structType struct {
	name   string // pkg.Type
	pos    string // file:line
	fields []string
}

// structsOf parses the non-test files of the folder dir (from the module
// root r) and returns its struct types (exported only, unless all).
// Types in the folder's own package are written qualified with its name,
// as other packages write them, so that fields compare across packages.
func structsOf(r, dir string, all bool) ([]structType, error) {
	files, err := filepath.Glob(filepath.Join(r, dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []structType
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		af, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		self := af.Name.Name
		alias := map[string]string{} // import name → package's last path element
		for _, imp := range af.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			last := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				alias[imp.Name.Name] = last
			}
		}
		for _, d := range af.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, sp := range g.Specs {
				ts := sp.(*ast.TypeSpec)
				st, ok := ts.Type.(*ast.StructType)
				if !ok || (!all && !ts.Name.IsExported()) {
					continue
				}
				t := structType{name: self + "." + ts.Name.Name, pos: fmt.Sprintf("%s:%d", filepath.ToSlash(dir)+"/"+filepath.Base(f), fset.Position(ts.Pos()).Line)}
				for _, fl := range st.Fields.List {
					typ := typeText(fl.Type, self, alias)
					for _, n := range fl.Names {
						t.fields = append(t.fields, n.Name+" "+typ)
					}
				}
				out = append(out, t)
			}
		}
	}
	return out, nil
}

// typeText writes a field's type with every named type qualified by its
// package's name (self for the file's own, unless predeclared).
func typeText(e ast.Expr, self string, alias map[string]string) string {
	switch e := e.(type) {
	case *ast.Ident:
		if token.IsExported(e.Name) {
			return self + "." + e.Name
		}
		return e.Name
	case *ast.SelectorExpr:
		pkg := fmt.Sprint(e.X)
		if a, ok := alias[pkg]; ok {
			pkg = a
		}
		return pkg + "." + e.Sel.Name
	case *ast.StarExpr:
		return "*" + typeText(e.X, self, alias)
	case *ast.ArrayType:
		return "[]" + typeText(e.Elt, self, alias)
	case *ast.MapType:
		return "map[" + typeText(e.Key, self, alias) + "]" + typeText(e.Value, self, alias)
	case *ast.IndexExpr:
		return typeText(e.X, self, alias) + "[" + typeText(e.Index, self, alias) + "]"
	}
	return fmt.Sprintf("%T", e) // func, chan, interface, struct literals: compared by kind only
}

// copyOf returns the owner struct c copies (nil: none): at least
// copyMinFields of c's fields, and copyShare of them, are fields of that
// struct with the same name and type.
func copyOf(c structType, owners []structType) *structType {
	if len(c.fields) < copyMinFields {
		return nil
	}
	for i, o := range owners {
		same := 0
		for _, f := range c.fields {
			if slices.Contains(o.fields, f) {
				same++
			}
		}
		if same >= copyMinFields && float64(same) >= copyShare*float64(len(c.fields)) {
			return &owners[i]
		}
	}
	return nil
}

// TestFrontEndsKeepNoCopies fails on a struct in tui or cmd/gwdev that
// copies an owner package's struct (copyOf) or comes back under the name
// of a removed copy.
func TestFrontEndsKeepNoCopies(t *testing.T) {
	r := root(t)
	var owners []structType
	for _, d := range typeOwners {
		s, err := structsOf(r, d, false)
		if err != nil {
			t.Fatal(err)
		}
		owners = append(owners, s...)
	}
	if len(owners) < 100 {
		t.Fatalf("only %d owner structs: is the module root %s?", len(owners), r)
	}
	for _, d := range frontEnds {
		cands, err := structsOf(r, d, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cands {
			if o := copyOf(c, owners); o != nil {
				t.Errorf("%s: %s copies %s (%s): use it, or keep only what the front end adds", c.pos, c.name, o.name, o.pos)
			}
			if was, ok := removedCopies[strings.TrimPrefix(c.name, "tui.")]; ok && strings.HasPrefix(c.name, "tui.") {
				t.Errorf("%s: %s was a copy of %s: use that", c.pos, c.name, was)
			}
		}
	}
}

// TestCopiesFound keeps copyOf honest on the copies issue 36 removed.
func TestCopiesFound(t *testing.T) {
	owner := []structType{
		{name: "watch.StaleObject", fields: []string{"Object engine.ObjectKey", "Source engine.Source", "Reason string"}},
		{name: "watch.Problem", fields: []string{"File string", "Line int", "Column int", "Object engine.ObjectKey", "Field string",
			"Message string", "Pruned bool", "Kind watch.ProblemKind"}},
	}
	for _, c := range []structType{
		{name: "tui.StaleObject", fields: []string{"Object engine.ObjectKey", "Source engine.Source", "Reason string"}},
		{name: "tui.LoadProblem", fields: []string{"File string", "Line int", "Column int", "Object engine.ObjectKey", "Field string",
			"Message string", "Hint string"}},
	} {
		if copyOf(c, owner) == nil {
			t.Errorf("%s not found a copy", c.name)
		}
	}
	own := structType{name: "tui.problem", fields: []string{"source problemSource", "severity engine.Severity", "where string",
		"object engine.ObjectKey", "message string", "explain string"}}
	if o := copyOf(own, owner); o != nil {
		t.Errorf("the Problems view's own row taken for a copy of %s", o.name)
	}
	// A struct of the owner package compares as the front end writes it.
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "watch"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "package watch\nimport \"github.com/gwdev/gwdev/engine\"\ntype StaleObject struct {\n\tObject engine.ObjectKey\n\tSource engine.Source\n\tReason string\n\tKind ProblemKind\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "watch", "s.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := structsOf(dir, "watch", false)
	if err != nil || len(got) != 1 || !slices.Equal(got[0].fields, []string{"Object engine.ObjectKey", "Source engine.Source", "Reason string", "Kind watch.ProblemKind"}) {
		t.Fatalf("structsOf: %+v, %v", got, err)
	}
}
