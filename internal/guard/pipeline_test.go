package guard

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The one project pipeline (internal/project): a command, front end or
// scaffold that made its own loader, its own engine.Options or ran the
// translation itself could read the same folder another way (gwdev.yaml,
// --crds, profiles, render:, the loader's warnings). These are the
// identifiers that do it, by package path; TestOnePipeline reads every
// non-test Go file's syntax (so an import alias or a line break does not
// hide a call) and fails on one outside its owner.
const module = "github.com/gwdev/gwdev/"

// pipelineOnly are the identifiers, per package, only the pipeline may use.
var pipelineOnly = map[string]map[string]string{
	module + "watch": {
		"NewLoader":    "makes a loader",
		"NewLoaderFor": "makes a loader",
		"Loader":       "holds a loader",
	},
	module + "engine": {
		"Translate":           "translates",
		"TranslateNext":       "translates",
		"TranslateTableFirst": "translates",
		"Options":             "makes engine options", // a parameter of that type is only handed them (see pipelineUses)
	},
	module + "internal/project": {
		"NewLoader": "makes a loader",
		"Translate": "translates with options it was given, not the project's",
	},
}

// pipelineOwner is the folder (slash path from the module root) whose
// files may use every identifier of pipelineOnly; the package of an
// identifier never qualifies it itself.
const pipelineOwner = "internal/project"

// pipelineExceptions are the other folders allowed one identifier
// ("project.Translate"), each with why.
var pipelineExceptions = map[string]map[string]string{
	"internal/testkit": {
		"project.Translate": "the test scaffolding (imported by _test.go files only): tests give the engine's options themselves",
	},
}

// pipelineUse is one use of an identifier of pipelineOnly.
type pipelineUse struct {
	// Name is how the file wrote it ("watch.NewLoader", "w.NewLoader");
	// Ident is the package's last path element and the identifier
	// ("watch.NewLoader"), as pipelineExceptions name it.
	Name, Ident string
	Line        int
	What        string
}

func (u pipelineUse) String() string { return fmt.Sprintf("%d: %s (%s)", u.Line, u.Name, u.What) }

// pipelineUses lists where src (the Go file named file) uses an identifier
// of pipelineOnly. engine.Options
// counts where a value is made (a composite literal, new, a var of that
// type), not where it is a parameter or a field read.
func pipelineUses(file string, src []byte) ([]pipelineUse, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	local := map[string]string{} // the name a file calls a package by → its path
	var out []pipelineUse
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := pipelineOnly[path]; !ok {
			continue
		}
		name := path[strings.LastIndex(path, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "." {
			out = append(out, pipelineUse{Name: ". " + path, Line: fset.Position(imp.Pos()).Line, What: "a dot import hides its calls"})
		}
		local[name] = path
	}
	if len(local) == 0 {
		return out, nil
	}
	// made are the engine.Options selectors where a value is made.
	made := map[*ast.SelectorExpr]bool{}
	optionsSel := func(e ast.Expr) *ast.SelectorExpr {
		if s, ok := e.(*ast.SelectorExpr); ok && s.Sel.Name == "Options" {
			if id, ok := s.X.(*ast.Ident); ok && local[id.Name] == module+"engine" {
				return s
			}
		}
		return nil
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if s := optionsSel(n.Type); s != nil {
				made[s] = true
			}
		case *ast.ValueSpec:
			if s := optionsSel(n.Type); s != nil {
				made[s] = true
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 {
				if s := optionsSel(n.Args[0]); s != nil {
					made[s] = true
				}
			}
		}
		return true
	})
	ast.Inspect(f, func(n ast.Node) bool {
		s, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := s.X.(*ast.Ident)
		if !ok {
			return true
		}
		path, ok := local[id.Name]
		if !ok {
			return true
		}
		what, ok := pipelineOnly[path][s.Sel.Name]
		if !ok || (path == module+"engine" && s.Sel.Name == "Options" && !made[s]) {
			return true
		}
		out = append(out, pipelineUse{Name: id.Name + "." + s.Sel.Name, Ident: path[strings.LastIndex(path, "/")+1:] + "." + s.Sel.Name,
			Line: fset.Position(s.Pos()).Line, What: what})
		return true
	})
	return out, nil
}

// TestOnePipeline fails when a non-test Go file outside the pipeline's
// owners makes a loader, makes engine.Options or translates.
func TestOnePipeline(t *testing.T) {
	r := root(t)
	files := 0
	err := filepath.WalkDir(r, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "testdata" || n == "vendor" || (strings.HasPrefix(n, ".") && path != r) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(r, path)
		rel = filepath.ToSlash(rel)
		dir := filepath.ToSlash(filepath.Dir(rel))
		if dir == pipelineOwner {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		uses, err := pipelineUses(rel, src)
		if err != nil {
			return err
		}
		for _, u := range uses {
			if _, ok := pipelineExceptions[dir][u.Ident]; ok {
				continue
			}
			t.Errorf("%s:%s: the project pipeline outside internal/project: load and translate through project.Open (or read a Session's State)", rel, u)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read only %d files: is the module root %s?", files, r)
	}
}

// TestOnePipelineCatches keeps pipelineUses honest: it finds a loader made,
// options made and a translation run however the import is named, and
// leaves alone options handed in and other packages' names.
func TestOnePipelineCatches(t *testing.T) {
	bad := map[string]string{
		"loader": `package x
import "github.com/gwdev/gwdev/watch"
func f() { l, _ := watch.NewLoader(); _ = l }`,
		"aliased loader": `package x
import w "github.com/gwdev/gwdev/watch"
func f() { _, _ = w.NewLoaderFor(nil) }`,
		"loader held": `package x
import "github.com/gwdev/gwdev/watch"
type s struct{ l *watch.Loader }`,
		"translation": `package x
import "github.com/gwdev/gwdev/engine"
func f(s *engine.Snapshot) { _ = engine.
	Translate(s, opts) }`,
		"options made": `package x
import "github.com/gwdev/gwdev/engine"
var o = engine.Options{Classes: []string{"a"}}`,
		"options declared": `package x
import "github.com/gwdev/gwdev/engine"
func f() { var o engine.Options; o.Classes = nil }`,
		"scaffold's translation": `package x
import "github.com/gwdev/gwdev/internal/project"
func f() { _ = project.Translate(nil, o) }`,
		"dot import": `package x
import . "github.com/gwdev/gwdev/engine"
func f() { _ = Translate(nil, Options{}) }`,
	}
	for name, src := range bad {
		uses, err := pipelineUses(name+".go", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if len(uses) != 1 {
			t.Errorf("%s: %d uses found, want 1: %q", name, len(uses), uses)
		}
	}
	good := `package x
import (
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/watch"
)
func conf(snap *engine.Snapshot, opts engine.Options) string { return opts.Classes[0] }
func f(p *project.Project) { lr := p.LoadDir("x"); _ = p.Translate(lr.Snapshot, project.Translation{}); _ = watch.Merge(lr) }`
	if uses, err := pipelineUses("good.go", []byte(good)); err != nil || len(uses) > 0 {
		t.Errorf("allowed code: %q, %v", uses, err)
	}
}
