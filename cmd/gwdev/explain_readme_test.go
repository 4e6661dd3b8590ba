package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSampleREADMEExplainLines runs every `gwdev explain` line of the
// sample READMEs as printed (the folder made relative to this package) and
// requires an answer from a Gateway, with exit status 0 when a backend
// serves it and 1 when it is refused or answered with an error.
func TestSampleREADMEExplainLines(t *testing.T) {
	line := regexp.MustCompile(`^\s+gwdev explain (.*?)(\s+#.*)?$`)
	readmes, _ := filepath.Glob("../../samples/*/README.md")
	n := 0
	for _, f := range readmes {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			m := line.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			n++
			args := append([]string{"explain"}, shellWords(strings.ReplaceAll(" "+m[1], " samples/", " ../../samples/"))...) // DIR or --dir DIR
			out, errOut, code := runGwdev(t, "", args...)
			if want := explainWantCode(out); code != want || !strings.Contains(out, "gateway:") {
				t.Errorf("%s: gwdev %s: exit %d, no Gateway answered:\n%s%s", f, m[1], code, out, errOut)
			}
		}
	}
	if n < 5 {
		t.Errorf("only %d explain lines in the sample READMEs", n)
	}
}

// shellWords splits a command line at spaces, keeping single-quoted words
// whole (what the READMEs use).
func shellWords(s string) []string {
	var out []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}
