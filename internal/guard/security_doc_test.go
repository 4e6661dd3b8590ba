package guard

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// securityDoc is the page that says what a folder, a cluster and a client
// can make gwdev do; README.md's Security section points to it.
const securityDoc = "docs/security.md"

var (
	// testRef is a test or fuzz target a line names (`TestX`, `TestX/sub`).
	testRef = regexp.MustCompile("`((?:Test|Fuzz)[A-Za-z0-9_]+)(?:/[^`]*)?`")
	// goldenRef is an engine golden case a line names (golden `case`).
	goldenRef = regexp.MustCompile("golden `([a-z0-9-]+)`")
)

// TestSecurityDocLinesNameTheirTests: every claim of the security page (a
// list item under one of its "What a … can make gwdev do" sections) names
// at least one test, fuzz target or engine golden case that proves it, and
// each one it names exists. A claim without its test, or one whose test
// was renamed or deleted, fails here.
func TestSecurityDocLinesNameTheirTests(t *testing.T) {
	dir := root(t)
	f, err := os.Open(filepath.Join(dir, securityDoc))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	funcs := testFuncs(t, dir)
	var (
		section string
		claims  = map[string]int{}
		claim   string // the list item being read, its lines joined
		at      int    // the line it starts on
	)
	check := func() {
		if claim == "" {
			return
		}
		claims[section]++
		tests, goldens := testRef.FindAllStringSubmatch(claim, -1), goldenRef.FindAllStringSubmatch(claim, -1)
		if len(tests)+len(goldens) == 0 {
			t.Errorf("%s:%d (%s): the claim names no test: %.80s…", securityDoc, at, section, claim)
		}
		for _, m := range tests {
			if !funcs[m[1]] {
				t.Errorf("%s:%d: %s is not a test function of this repository", securityDoc, at, m[1])
			}
		}
		for _, m := range goldens {
			if _, err := os.Stat(filepath.Join(dir, "engine", "testdata", m[1]+".in.yaml")); err != nil {
				t.Errorf("%s:%d: golden case %s: %v", securityDoc, at, m[1], err)
			}
		}
		claim = ""
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "#"):
			check()
			section = ""
			if strings.Contains(line, "can make gwdev do") {
				section = strings.TrimSpace(strings.TrimLeft(line, "#"))
			}
		case section != "" && strings.HasPrefix(line, "- "):
			check()
			claim, at = line, n
		case claim != "" && strings.HasPrefix(line, "  "):
			claim += " " + strings.TrimSpace(line)
		default:
			check()
		}
	}
	check()
	for _, want := range []string{"folder", "cluster", "client"} {
		found := false
		for s, n := range claims {
			found = found || (strings.Contains(s, "a "+want) && n > 0)
		}
		if !found {
			t.Errorf("%s has no claims under \"What a %s can make gwdev do\"", securityDoc, want)
		}
	}
}

// testFuncs are the names of the test and fuzz functions in the
// repository's _test.go files.
func testFuncs(t *testing.T, dir string) map[string]bool {
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)[A-Za-z0-9_]+)\(`)
	out := map[string]bool{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(data, -1) {
			out[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
