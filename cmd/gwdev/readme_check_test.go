package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeExample is a `gwdev check` output shown in a README: the block
// after a line ending "(`gwdev check ARGS`):" (the whole output, timings
// aside) or "(`gwdev check ARGS`, excerpt):" (every line of the block is in
// the output; the README may wrap long lines and cut them with "…").
type readmeExample struct {
	file, args string
	excerpt    bool
	block      []string
}

var readmeMarker = regexp.MustCompile("`gwdev check ([^`]+)`(, excerpt)?\\)?:\\s*$")

func readmeExamples(t *testing.T, file string) []readmeExample {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []readmeExample
	for i := 0; i < len(lines); i++ {
		m := readmeMarker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j >= len(lines) || !strings.HasPrefix(lines[j], "```") {
			t.Errorf("%s:%d: an example marker without a code block after it", file, i+1)
			continue
		}
		ex := readmeExample{file: file, args: m[1], excerpt: m[2] != ""}
		for j++; j < len(lines) && !strings.HasPrefix(lines[j], "```"); j++ {
			ex.block = append(ex.block, lines[j])
		}
		out = append(out, ex)
		i = j
	}
	return out
}

var checkTimings = regexp.MustCompile(`in [0-9.]+[µnm]?s; translated in [0-9.]+[µnm]?s`)

// TestReadmeCheckExamples: every `gwdev check` output shown in README.md,
// docs/**/*.md and the samples' READMEs is what gwdev check prints today.
func TestReadmeCheckExamples(t *testing.T) {
	files, _ := filepath.Glob("../../samples/*/README.md")
	for _, f := range docFiles(t) {
		files = append(files, filepath.Join(repoRoot, f))
	}
	n := 0
	for _, f := range files {
		for _, ex := range readmeExamples(t, f) {
			n++
			args := strings.Fields(ex.args)
			for i, a := range args {
				if strings.HasPrefix(a, "samples/") {
					args[i] = "../../" + a
				}
			}
			out, errOut, code := runGwdev(t, "", append([]string{"check"}, args...)...)
			if code == exitUsage {
				t.Errorf("%s: gwdev check %s: exit %d: %s", ex.file, ex.args, code, errOut)
				continue
			}
			out = checkTimings.ReplaceAllString(strings.ReplaceAll(out, "../../samples/", "samples/"), "in T; translated in T")
			if ex.excerpt {
				flat := strings.Join(strings.Fields(out), " ")
				for _, l := range ex.block {
					for _, piece := range strings.Split(l, "…") { // a cut
						piece = strings.Join(strings.Fields(piece), " ")
						if piece != "" && !strings.Contains(flat, piece) {
							t.Errorf("%s: gwdev check %s does not print %q; it prints:\n%s", ex.file, ex.args, piece, out)
						}
					}
				}
				continue
			}
			want := checkTimings.ReplaceAllString(strings.Join(ex.block, "\n"), "in T; translated in T")
			if got := strings.TrimRight(out, "\n"); got != strings.TrimRight(want, "\n") {
				t.Errorf("%s: the example of gwdev check %s is stale; gwdev prints:\n%s", ex.file, ex.args, got)
			}
		}
	}
	if n < 3 {
		t.Errorf("found %d README examples of gwdev check, want at least 3 (docs/commands/check.md has the listenerset, shadowed and policies ones)", n)
	}
}
