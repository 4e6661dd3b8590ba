package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// durations matches the timing figures of the summary's first line.
var durations = regexp.MustCompile(`in [0-9.]+(µs|ms|s|ns); translated in [0-9.]+(µs|ms|s|ns)`)

// runGwdev runs the CLI in-process and returns stdout, stderr and the exit code.
func runGwdev(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/gwdev -update)", err)
	}
	if d := cmp.Diff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, d)
	}
}

// TestCheckSamples golden-tests `gwdev check` on every bundled sample, in
// both the summary and the YAML form, with the expected exit code.
func TestCheckSamples(t *testing.T) {
	dirs, err := filepath.Glob("../../samples/*")
	if err != nil {
		t.Fatal(err)
	}
	wantExit := map[string]int{"conflicts": 1, "cross-namespace": 1, "listenerset": 1, "gwin": 1}
	n := 0
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		n++
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			out, errOut, code := runGwdev(t, "", "check", "--now", "2026-01-01T00:00:00Z", dir)
			if code != wantExit[name] {
				t.Errorf("exit %d, want %d\n%s%s", code, wantExit[name], out, errOut)
			}
			golden(t, "check-"+name+".txt", durations.ReplaceAllString(out, "in DURATION; translated in DURATION"))
			y, _, ycode := runGwdev(t, "", "check", "-o", "yaml", "--now", "2026-01-01T00:00:00Z", dir)
			if ycode != code {
				t.Errorf("-o yaml exit %d, summary exit %d", ycode, code)
			}
			golden(t, "check-"+name+".yaml", y)
		})
	}
	if n < 5 {
		t.Fatalf("found %d samples, want at least 5", n)
	}
}

func TestCheckUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"check", "-o", "xml", "."},
		{"check", "a", "b"},
		{"check", "--no-such-flag"},
		{"check", "-f", "x.yaml", "dir"},
		{"frobnicate"},
	} {
		_, errOut, code := runGwdev(t, "", args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", args, code, exitUsage, errOut)
		}
		if errOut == "" {
			t.Errorf("%v: no message on stderr", args)
		}
	}
}

func TestCheckStdin(t *testing.T) {
	manifest := `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  listeners: [{name: http, protocol: HTTP, port: 80}]
`
	out, errOut, code := runGwdev(t, manifest, "check", "-f", "-", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{`"kind": "List"`, `"kind": "Gateway"`, `"value": "127.0.0.1"`, `"type": "Programmed"`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
}

// TestCheckGeneratedRoutes golden-tests the summary, -o yaml and -o json
// of a folder written by bench/genroutes (12 HTTPRoutes with their
// Services, 5 per file: testdata/genroutes-12), the shape bench/check.sh
// measures at 10,000 routes. The goldens were written by the build before
// the loader's memory work (issue 16), which must not change a byte.
func TestCheckGeneratedRoutes(t *testing.T) {
	dir := filepath.Join("testdata", "genroutes-12")
	for _, format := range []string{"summary", "yaml", "json"} {
		out, errOut, code := runGwdev(t, "", "check", "--now", "2026-01-01T00:00:00Z", "-o", format, dir)
		if code != 0 {
			t.Errorf("-o %s: exit %d\n%s", format, code, errOut)
		}
		name := "check-genroutes-12." + format
		if format == "summary" {
			name = "check-genroutes-12.txt"
			out = durations.ReplaceAllString(out, "in DURATION; translated in DURATION")
		}
		golden(t, name, out)
	}
}
