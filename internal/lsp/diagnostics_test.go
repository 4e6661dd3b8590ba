package lsp

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.lsp.dev/protocol"
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
