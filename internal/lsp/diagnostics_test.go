package lsp

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.lsp.dev/protocol"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
)

const samples = "../../samples"

// hasCode reports whether ds hold a diagnostic with code on line (0-based;
// negative: any line).
func hasCode(ds []protocol.Diagnostic, code string, line int) bool {
	return slices.ContainsFunc(ds, func(d protocol.Diagnostic) bool {
		return d.Code == code && (line < 0 || int(d.Range.Start.Line) == line)
	})
}

// TestPushDiagnosticsAsYouType types a wrong sectionName into an open
// buffer (never saved): the parentRef's line gets NoMatchingParent with
// its hint; fixing it clears the diagnostic. The file on disk is not
// touched.
func TestPushDiagnosticsAsYouType(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "https"), nil, nil)
	gw := c.path("gateway.yaml")
	text := c.open("gateway.yaml")
	bad := c.edit("gateway.yaml", text, 2, "sectionName: https", "sectionName: httpz")
	line := int(at(t, bad, "- name: secure\n    sectionName: httpz").Line)
	ds := c.waitDiags("NoMatchingParent", func(d map[string][]protocol.Diagnostic) bool { return hasCode(d[gw], "NoMatchingParent", line) })
	t.Logf("%+v", ds[gw])
	for _, d := range ds[gw] {
		if d.Code == "NoMatchingParent" {
			if d.Severity != protocol.DiagnosticSeverityError || d.Source != "gwdev" || d.Range.End.Character <= d.Range.Start.Character {
				t.Errorf("diagnostic %+v: want an error from gwdev on a non-empty range", d)
			}
		}
	}
	c.edit("gateway.yaml", bad, 3, "sectionName: httpz", "sectionName: https")
	c.waitDiags("NoMatchingParent cleared", func(d map[string][]protocol.Diagnostic) bool { return !hasCode(d[gw], "NoMatchingParent", -1) })
	if disk, _ := os.ReadFile(gw); string(disk) != text {
		t.Fatal("the server wrote the user's file")
	}
}

// TestDiagnosticsAcrossFiles edits the Gateway's listener in one buffer:
// the route in another file, which attaches to it, gets its diagnostic.
func TestDiagnosticsAcrossFiles(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "basic"), nil, nil)
	app := c.path("app.yaml")
	text := c.open("gateway.yaml")
	c.edit("gateway.yaml", text, 2, "protocol: HTTP", "protocol: TCP")
	c.waitDiags("the route in app.yaml refused", func(d map[string][]protocol.Diagnostic) bool {
		return hasCode(d[app], "NotAllowedByListeners", -1)
	})
}

// TestDiagnosticsEqualCheck pulls every manifest's diagnostics on every
// sample and compares them with `gwdev check -o json`'s findings
// (app.Once, report.Findings): the same codes at the same lines and
// columns, file by file.
func TestDiagnosticsEqualCheck(t *testing.T) {
	entries, err := os.ReadDir(samples)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			c := startClient(t, filepath.Join(samples, e.Name()), nil, pullCaps)
			checked, err := app.Once([]string{c.dir}, project.Flags{}, app.OnceOptions{Now: metav1.NewTime(time.Now().UTC()), Where: c.dir})
			if err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{}
			// elsewhere are the messages of findings without a file (the
			// class gwdev manages without a GatewayClass manifest): each
			// is on the objects that name their object.
			elsewhere := map[string]bool{}
			for _, f := range report.Findings(checked.Update.Result, checked.Result) {
				if f.File == "" {
					elsewhere[f.Message] = true
					continue
				}
				p := absPath(f.File)
				col := f.Column - 1
				if f.Column == 0 { // unknown: the line's first character
					text := lineOf(t, p, f.Line-1)
					col = len([]rune(text)) - len([]rune(strings.TrimLeft(text, " ")))
				}
				want[p] = append(want[p], fmt.Sprintf("%s %d:%d", f.Code, f.Line-1, col))
			}
			files := manifestFiles(t, c.dir)
			for p := range want {
				if !slices.Contains(files, p) {
					files = append(files, p)
				}
			}
			n := 0
			for _, p := range files {
				var rep documentDiagnosticReport
				if err := c.call("textDocument/diagnostic", map[string]any{"textDocument": map[string]any{"uri": uriOf(p)}}, &rep); err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, d := range rep.Items {
					if elsewhere[strings.SplitN(d.Message, "\n", 2)[0]] {
						delete(elsewhere, strings.SplitN(d.Message, "\n", 2)[0])
						continue
					}
					text := lineOf(t, p, int(d.Range.Start.Line))
					got = append(got, fmt.Sprintf("%s %d:%d", d.Code, d.Range.Start.Line, len([]rune(text[:byteColumn(text, d.Range.Start.Character)]))))
				}
				n += len(got)
				if diff := cmp.Diff(want[p], got); diff != "" {
					t.Errorf("%s: diagnostics differ from check's findings (-check +lsp):\n%s", p, diff)
				}
			}
			for m := range elsewhere {
				t.Errorf("a finding without a file is on no object: %s", m)
			}
			t.Logf("%d diagnostics", n)
		})
	}
}

// pullCaps are a client's capabilities that pull diagnostics (3.17).
var pullCaps = map[string]any{"textDocument": map[string]any{"diagnostic": map[string]any{}},
	"workspace": map[string]any{"diagnostics": map[string]any{"refreshSupport": true}}}

// manifestFiles lists the *.yaml files under dir.
func manifestFiles(t *testing.T, dir string) []string {
	var out []string
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// lineOf returns line n (0-based) of the file at p.
func lineOf(t *testing.T, p string, n int) string {
	data, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	ls := lines(string(data))
	if n >= len(ls) {
		return ""
	}
	return ls[n]
}

// TestBrokenBufferKeepsLastGood breaks the Gateway's YAML in its buffer:
// the file's diagnostic says where the YAML breaks, and the route in the
// other file still attaches to the Gateway's last good version.
func TestBrokenBufferKeepsLastGood(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "basic"), nil, nil)
	gw, app := c.path("gateway.yaml"), c.path("app.yaml")
	text := c.open("gateway.yaml")
	c.edit("gateway.yaml", text, 2, "  - name: http\n", "  - name: http\n   bad: [\n")
	ds := c.waitDiags("LoadError in gateway.yaml", func(d map[string][]protocol.Diagnostic) bool { return hasCode(d[gw], "LoadError", -1) })
	for _, d := range ds[gw] {
		if d.Code == "LoadError" && d.Range.Start.Line < 9 {
			t.Errorf("the YAML error is at line %d, before the listener it breaks: %+v", d.Range.Start.Line, d)
		}
	}
	if hasCode(ds[app], "NoMatchingParent", -1) || hasCode(ds[app], "NotAllowedByListeners", -1) {
		t.Fatalf("the route lost its Gateway when the Gateway's buffer broke: %v", ds[app])
	}
}

// TestPullDiagnostics is a 3.17 client: it pulls, is asked to pull again
// after an edit, and pulls the new diagnostics; an unchanged State is
// reported unchanged. Nothing is pushed to it.
func TestPullDiagnostics(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "https"), nil, pullCaps)
	gw := c.path("gateway.yaml")
	pull := func(prev string) documentDiagnosticReport {
		var rep documentDiagnosticReport
		if err := c.call("textDocument/diagnostic", map[string]any{"textDocument": map[string]any{"uri": uriOf(gw)}, "previousResultId": prev}, &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	first := pull("")
	if first.Kind != "full" || hasCode(first.Items, "NoMatchingParent", -1) {
		t.Fatalf("first pull: %+v", first)
	}
	if again := pull(first.ResultID); again.Kind != "unchanged" {
		t.Fatalf("pull of an unchanged State: %+v", again)
	}
	text := c.open("gateway.yaml")
	c.edit("gateway.yaml", text, 2, "sectionName: https", "sectionName: httpz")
	deadline := time.After(20 * time.Second)
	for {
		select {
		case <-c.refreshed:
		case <-deadline:
			t.Fatal("no workspace/diagnostic/refresh with NoMatchingParent within 20s")
		}
		if rep := pull(first.ResultID); rep.Kind == "full" && hasCode(rep.Items, "NoMatchingParent", -1) {
			break
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.diags) > 0 {
		t.Fatalf("diagnostics were pushed to a client that pulls: %v", c.diags)
	}
}

// TestDidClose closes a buffer with unsaved changes: the file on disk is
// read again and its diagnostics go back to the disk's.
func TestDidClose(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "https"), nil, nil)
	gw := c.path("gateway.yaml")
	text := c.open("gateway.yaml")
	c.edit("gateway.yaml", text, 2, "sectionName: https", "sectionName: httpz")
	c.waitDiags("NoMatchingParent", func(d map[string][]protocol.Diagnostic) bool { return hasCode(d[gw], "NoMatchingParent", -1) })
	c.notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uriOf(gw)}})
	c.waitDiags("the disk's diagnostics", func(d map[string][]protocol.Diagnostic) bool { return !hasCode(d[gw], "NoMatchingParent", -1) })
}

// TestKustomizeInputBuffer opens and edits (a comment) a file a
// kustomization reads: its objects come from the build, which reads the
// disk, never a second time from the buffer as a file of their own, so
// every file's diagnostics stay what they were.
func TestKustomizeInputBuffer(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "kustomize"), nil, pullCaps)
	all := func() string {
		var out []string
		for _, p := range manifestFiles(t, c.dir) {
			var rep documentDiagnosticReport
			if err := c.call("textDocument/diagnostic", map[string]any{"textDocument": map[string]any{"uri": uriOf(p)}}, &rep); err != nil {
				t.Fatal(err)
			}
			for _, d := range rep.Items {
				out = append(out, fmt.Sprintf("%s %v %d", filepath.Base(p), d.Code, d.Range.Start.Line))
			}
		}
		return strings.Join(out, "\n")
	}
	before := all()
	text := c.open("base/shop.yaml")
	c.edit("base/shop.yaml", text, 2, "\n", "\n# edited\n")
	select {
	case <-c.refreshed:
	case <-time.After(2 * time.Second): // nothing changed: no refresh
	}
	if after := all(); after != before {
		t.Fatalf("diagnostics before the edit:\n%s\nafter:\n%s", before, after)
	}
}
