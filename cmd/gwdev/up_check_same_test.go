package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestUpNoTUIReportsWhatCheckReports runs `gwdev check` and `gwdev up
// --no-tui` on samples/ingress-nginx as it is and with two annotations
// gwdev does not emulate (configuration-snippet, server-snippet), and
// compares: up's first state counts the same errors and warnings as check
// and lists each of check's findings (up said "0 problems" while check
// reported the warnings).
func TestUpNoTUIReportsWhatCheckReports(t *testing.T) {
	snippets := "    nginx.ingress.kubernetes.io/proxy-body-size: 8m\n" +
		"    nginx.ingress.kubernetes.io/configuration-snippet: |\n      more_set_headers \"X-Shop: 1\";\n" +
		"    nginx.ingress.kubernetes.io/server-snippet: |\n      return 200;\n"
	for _, c := range []struct {
		name     string
		edit     func(string) string
		warnings int
	}{
		{"sample", func(s string) string { return s }, 0},
		{"snippets", func(s string) string {
			return strings.Replace(s, "    nginx.ingress.kubernetes.io/proxy-body-size: 8m\n", snippets, 1)
		}, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ingress-nginx")
			if err := os.CopyFS(dir, os.DirFS("../../samples/ingress-nginx")); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, "ingresses.yaml")
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(c.edit(string(b))), 0o644); err != nil {
				t.Fatal(err)
			}

			checkOut, _, _ := runGwdev(t, "", "check", dir)
			nerr, nwarn := 0, 0
			if m := regexp.MustCompile(`(\d+) errors?, (\d+) warnings?\.`).FindStringSubmatch(checkOut); m != nil {
				nerr, _ = strconv.Atoi(m[1])
				nwarn, _ = strconv.Atoi(m[2])
			} else if !strings.Contains(checkOut, "No problems") {
				t.Fatalf("check's summary has no counts:\n%s", checkOut)
			}
			if nwarn != c.warnings {
				t.Fatalf("check: %d warnings, want %d:\n%s", nwarn, c.warnings, checkOut)
			}
			// check's findings: each "  ✗|! <source>  <object>" line, then
			// its message on the next.
			var findings []string
			lines := strings.Split(checkOut, "\n")
			for i, l := range lines {
				if (strings.HasPrefix(l, "  ✗ ") || strings.HasPrefix(l, "  ! ")) && i+1 < len(lines) {
					findings = append(findings, strings.TrimSpace(lines[i+1]))
				}
			}

			// Port 80 moves to a free port; 443 likewise when taken.
			o := &upOptions{debounce: 10 * time.Millisecond, admin: "off", noTUI: true, portOffset: freePort(t) - 80}
			out := runUp(t, o, dir)
			waitForOutput(t, out, "gwdev: watching")
			got := out.String()
			m := regexp.MustCompile(`loaded: \d+ objects, (\d+) problems?(?:, (\d+) warnings?)?;`).FindStringSubmatch(got)
			if m == nil {
				t.Fatalf("up --no-tui has no counts:\n%s", got)
			}
			upErr, _ := strconv.Atoi(m[1])
			upWarn, _ := strconv.Atoi(m[2]) // "" (no warnings) is 0
			if upErr != nerr || upWarn != nwarn {
				t.Errorf("up --no-tui counts %d problems, %d warnings; check %d errors, %d warnings:\n%s\ncheck:\n%s", upErr, upWarn, nerr, nwarn, got, checkOut)
			}
			var upLines []string
			for _, l := range strings.Split(got, "\n") {
				if strings.HasPrefix(l, "  ✗ ") || strings.HasPrefix(l, "  ! ") {
					upLines = append(upLines, l)
				}
			}
			if len(upLines) != len(findings) {
				t.Errorf("up --no-tui lists %d findings, check %d:\n%s\ncheck:\n%s", len(upLines), len(findings), got, checkOut)
			}
			for _, f := range findings {
				if !slices.ContainsFunc(upLines, func(l string) bool { return strings.HasSuffix(l, f) }) {
					t.Errorf("up --no-tui lacks check's finding %q:\n%s", f, got)
				}
			}
		})
	}
}
