package lsp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/gwdev/gwdev/engine/ingressnginx"
)

// textDoc is a position in name, as requests take it.
func (c *client) textDoc(name string, pos protocol.Position) map[string]any {
	return map[string]any{"textDocument": map[string]any{"uri": uriOf(c.path(name))}, "position": pos}
}

func (c *client) hoverText(t *testing.T, name string, pos protocol.Position) string {
	t.Helper()
	var h *protocol.Hover
	if err := c.call("textDocument/hover", c.textDoc(name, pos), &h); err != nil {
		t.Fatalf("hover: %v", err)
	}
	if h == nil {
		t.Fatalf("no hover at %s %v", name, pos)
	}
	return h.Contents.Value
}

func (c *client) locations(t *testing.T, method string, params map[string]any) []string {
	t.Helper()
	var locs []protocol.Location
	if err := c.call(method, params, &locs); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	var out []string
	for _, l := range locs {
		p, _ := pathOf(l.URI)
		rel, _ := filepath.Rel(c.dir, p)
		out = append(out, rel+":"+itoa(int(l.Range.Start.Line)+1))
	}
	return out
}

// TestHover hovers a Gateway (its computed status), a parentRef (where
// it attached; after a wrong sectionName is typed, why not) and a
// backendRef (what it resolves to, its weight share).
func TestHover(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "https"), nil, nil)
	text := c.open("gateway.yaml")
	gw := c.hoverText(t, "gateway.yaml", at(t, text, "name: secure"))
	if !strings.Contains(gw, "Gateway/default/secure") || !strings.Contains(gw, "attachedRoutes: 1") || !strings.Contains(gw, "Programmed") {
		t.Errorf("Gateway hover:\n%s", gw)
	}
	pr := c.hoverText(t, "gateway.yaml", at(t, text, "sectionName: admin"))
	if !strings.Contains(pr, "parentRef 0") || !strings.Contains(pr, "listener \"admin\"") || !strings.Contains(pr, "attached") || strings.Contains(pr, "not attached") {
		t.Errorf("parentRef hover:\n%s", pr)
	}
	be := c.hoverText(t, "gateway.yaml", at(t, text, "    - name: admin\n      port: 8080"))
	if !strings.Contains(be, "Service/default/admin port 8080") || !strings.Contains(be, "100%") || !strings.Contains(be, "resolves to: echo") {
		t.Errorf("backendRef hover:\n%s", be)
	}
	bad := c.edit("gateway.yaml", text, 2, "sectionName: admin", "sectionName: admim")
	c.waitDiags("NoMatchingParent", func(d map[string][]protocol.Diagnostic) bool {
		return hasCode(d[c.path("gateway.yaml")], "NoMatchingParent", -1)
	})
	pr = c.hoverText(t, "gateway.yaml", at(t, bad, "sectionName: admim"))
	if !strings.Contains(pr, "not attached") || !strings.Contains(pr, "NoMatchingParent") {
		t.Errorf("hover of a parentRef that does not attach:\n%s", pr)
	}
}

// TestDefinition jumps from a parentRef with a sectionName to the
// listener's line, from a backendRef to its Service, and from a backendRef
// across namespaces to the Service and the ReferenceGrant that permits it.
func TestDefinition(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "https"), nil, nil)
	text := c.open("gateway.yaml")
	got := c.locations(t, "textDocument/definition", c.textDoc("gateway.yaml", at(t, text, "sectionName: admin")))
	want := "gateway.yaml:" + itoa(int(at(t, text, "name: admin\n    protocol: HTTPS").Line)+1)
	if len(got) != 1 || got[0] != want {
		t.Errorf("parentRef → %v, want the admin listener %s", got, want)
	}
	got = c.locations(t, "textDocument/definition", c.textDoc("gateway.yaml", at(t, text, "    - name: admin\n      port: 8080")))
	want = "gateway.yaml:" + itoa(int(at(t, text, "apiVersion: v1\nkind: Service\nmetadata:\n  name: admin").Line)+1)
	if len(got) != 1 || got[0] != want {
		t.Errorf("backendRef → %v, want the Service %s", got, want)
	}

	x := startClient(t, filepath.Join(samples, "cross-namespace"), nil, nil)
	tb := x.open("team-b.yaml")
	got = x.locations(t, "textDocument/definition", x.textDoc("team-b.yaml", at(t, tb, "- name: store")))
	ta := x.open("team-a.yaml")
	svc := "team-a.yaml:" + itoa(int(at(t, ta, "apiVersion: v1\nkind: Service").Line)+1)
	grant := "team-a.yaml:" + itoa(int(at(t, ta, "apiVersion: gateway.networking.k8s.io/v1beta1").Line)+1)
	if strings.Join(got, " ") != svc+" "+grant {
		t.Errorf("backendRef across namespaces → %v, want %s %s", got, svc, grant)
	}
}

// TestReferences lists the parentRefs attached to a listener, and the
// references a ReferenceGrant permits.
func TestReferences(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "https"), nil, nil)
	text := c.open("gateway.yaml")
	got := c.locations(t, "textDocument/references", c.textDoc("gateway.yaml", at(t, text, "name: admin\n    protocol: HTTPS")))
	want := "gateway.yaml:" + itoa(int(at(t, text, "- name: secure\n    sectionName: admin").Line)+1)
	if len(got) != 1 || got[0] != want {
		t.Errorf("references of listener admin: %v, want %s", got, want)
	}
	x := startClient(t, filepath.Join(samples, "cross-namespace"), nil, nil)
	ta := x.open("team-a.yaml")
	got = x.locations(t, "textDocument/references", x.textDoc("team-a.yaml", at(t, ta, "name: allow-team-b")))
	if len(got) != 1 || !strings.HasPrefix(got[0], "team-b.yaml:") {
		t.Errorf("references of the ReferenceGrant: %v, want team-b's backendRef", got)
	}
}

// TestSymbols lists each object of a multi-document file with its
// listeners and rules, and finds objects across the workspace.
func TestSymbols(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "basic"), nil, nil)
	var syms []protocol.DocumentSymbol
	if err := c.call("textDocument/documentSymbol", map[string]any{"textDocument": map[string]any{"uri": uriOf(c.path("app.yaml"))}}, &syms); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range syms {
		names = append(names, s.Name)
		for _, ch := range s.Children {
			names = append(names, "  "+ch.Name)
		}
	}
	if got := strings.Join(names, "|"); got != "HTTPRoute app|  rule 0|  rule 1|Service api|Service frontend" {
		t.Errorf("document symbols: %s", got)
	}
	var ws []protocol.SymbolInformation
	if err := c.call("workspace/symbol", map[string]any{"query": "FRONT"}, &ws); err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 || ws[0].Name != "Service frontend" {
		t.Errorf("workspace symbols for FRONT: %+v", ws)
	}
}

// complete asks for completions at pos and returns their labels.
func (c *client) complete(t *testing.T, name string, pos protocol.Position) []string {
	t.Helper()
	var l protocol.CompletionList
	if err := c.call("textDocument/completion", c.textDoc(name, pos), &l); err != nil {
		t.Fatalf("completion: %v", err)
	}
	var out []string
	for _, it := range l.Items {
		out = append(out, it.Label)
	}
	return out
}

// endOf is the position just after the first occurrence of s.
func endOf(t testing.TB, text, s string) protocol.Position {
	t.Helper()
	i := strings.Index(text, s)
	if i < 0 {
		t.Fatalf("%q not in the text", s)
	}
	return positionOf(text, i+len(s))
}

// TestCompletion completes, as the user types, a parentRef's
// sectionName (the Gateway's listeners) and name (the Gateways), a
// backendRef's port (its Service's ports) and name (the Services), and a
// document's kind.
func TestCompletion(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "https"), nil, nil)
	text := c.open("gateway.yaml")
	text = c.edit("gateway.yaml", text, 2, "sectionName: admin", "sectionName: ")
	if got := strings.Join(c.complete(t, "gateway.yaml", endOf(t, text, "  - name: secure\n    sectionName: ")), " "); got != "https admin http" {
		t.Errorf("sectionName completions: %q", got)
	}
	if got := strings.Join(c.complete(t, "gateway.yaml", endOf(t, text, "  - name: sec")), " "); got != "secure" {
		t.Errorf("parentRef name completions: %q", got)
	}
	if got := strings.Join(c.complete(t, "gateway.yaml", endOf(t, text, "- backendRefs:\n    - name: a")), " "); got != "admin app" {
		t.Errorf("backendRef name completions: %q", got)
	}
	if got := strings.Join(c.complete(t, "gateway.yaml", endOf(t, text, "    - name: admin\n      port: ")), " "); got != "8080" {
		t.Errorf("backendRef port completions: %q", got)
	}
	if got := c.complete(t, "gateway.yaml", endOf(t, text, "kind: HTTP")); !slices.Contains(got, "HTTPRoute") || slices.Contains(got, "Gateway") {
		t.Errorf("kind completions: %q", got)
	}
	// Enum values of the CRD bundle: a filter's type.
	if got := strings.Join(c.complete(t, "gateway.yaml", endOf(t, text, "  - filters:\n    - type: Request")), " "); got != "RequestHeaderModifier RequestMirror RequestRedirect" {
		t.Errorf("filter type completions: %q", got)
	}
}

// TestCodeActions offers, for a wrong sectionName, the Gateway's other
// listeners, and for a backendRef across namespaces without a
// ReferenceGrant, a new ReferenceGrant document; applying the grant's
// edit in the buffer clears the diagnostic.
func TestCodeActions(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "https"), nil, nil)
	gw := c.path("gateway.yaml")
	text := c.open("gateway.yaml")
	bad := c.edit("gateway.yaml", text, 2, "sectionName: admin", "sectionName: admim")
	c.waitDiags("NoMatchingParent", func(d map[string][]protocol.Diagnostic) bool { return hasCode(d[gw], "NoMatchingParent", -1) })
	line := at(t, bad, "- name: secure\n    sectionName: admim").Line
	acts := c.actions(t, "gateway.yaml", line)
	var titles []string
	for _, a := range acts {
		titles = append(titles, a.Title)
	}
	if strings.Join(titles, "|") != `Change sectionName to "https" (HTTPS 443)|Change sectionName to "admin" (HTTPS 443)|Change sectionName to "http" (HTTP 80)` {
		t.Fatalf("actions: %q", titles)
	}
	fixed := applyEdits(bad, acts[1].Edit.Changes[uriOf(gw)])
	if !strings.Contains(fixed, "  - name: secure\n    sectionName: admin\n") {
		t.Fatalf("the fix does not give the admin listener:\n%s", fixed)
	}

	x := startClient(t, filepath.Join(samples, "cross-namespace"), nil, nil)
	sb := x.path("sandbox.yaml")
	st := x.open("sandbox.yaml")
	x.waitDiags("RefNotPermitted", func(d map[string][]protocol.Diagnostic) bool { return hasCode(d[sb], "RefNotPermitted", -1) })
	acts = x.actions(t, "sandbox.yaml", at(t, st, "- name: store").Line)
	if len(acts) != 1 || !strings.HasPrefix(acts[0].Title, "Add a ReferenceGrant in team-a") {
		t.Fatalf("actions: %+v", acts)
	}
	edits := acts[0].Edit.Changes[uriOf(sb)]
	granted := applyEdits(st, edits)
	x.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uriOf(sb), "version": 2},
		"contentChanges": []any{map[string]any{"range": edits[0].Range, "text": edits[0].NewText}}})
	x.waitDiags("RefNotPermitted gone", func(d map[string][]protocol.Diagnostic) bool { return !hasCode(d[sb], "RefNotPermitted", -1) })
	if !strings.Contains(granted, "kind: ReferenceGrant") {
		t.Fatalf("the edit:\n%s", granted)
	}
}

func (c *client) actions(t *testing.T, name string, line uint32) []protocol.CodeAction {
	t.Helper()
	var acts []protocol.CodeAction
	err := c.call("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": uriOf(c.path(name))},
		"range": protocol.Range{Start: protocol.Position{Line: line}, End: protocol.Position{Line: line, Character: 1}}, "context": map[string]any{"diagnostics": []any{}}}, &acts)
	if err != nil {
		t.Fatal(err)
	}
	return acts
}

// applyEdits applies non-overlapping edits to text, last first.
func applyEdits(text string, edits []protocol.TextEdit) string {
	d := &document{text: text}
	for i := len(edits) - 1; i >= 0; i-- {
		r := edits[i].Range
		d.apply([]contentChange{{Range: &r, Text: edits[i].NewText}})
	}
	return d.text
}

// TestHoverRule hovers a rule that another route's rule shadows, and the
// rule that shadows it.
func TestHoverRule(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "shadowed"), nil, nil)
	text := c.open("routes.yaml")
	loser := c.hoverText(t, "routes.yaml", at(t, text, "- name: api"))
	if !strings.Contains(loser, "**rule 0** of HTTPRoute/default/search") || !strings.Contains(loser, "never receives a request") || !strings.Contains(loser, "httproute/default/cart/rule/0") {
		t.Errorf("hover of the shadowed rule:\n%s", loser)
	}
	winner := c.hoverText(t, "routes.yaml", at(t, text, "- matches:\n    - path: {type: PathPrefix, value: /api}\n    backendRefs: [{name: cart"))
	if !strings.Contains(winner, "shadows httproute/default/search/rule/0") {
		t.Errorf("hover of the rule that shadows:\n%s", winner)
	}
}

// TestHoverAnnotation hovers an Ingress's ingress-nginx annotations: each
// says whether gwdev emulates it (as engine/ingressnginx's tables say)
// and what gwdev migrate does with it.
func TestHoverAnnotation(t *testing.T) {
	c := startClient(t, filepath.Join(samples, "ingress-nginx"), nil, nil)
	text := c.open("ingresses.yaml")
	for _, name := range []string{"proxy-body-size", "enable-cors", "limit-rps", "canary-weight"} {
		h := c.hoverText(t, "ingresses.yaml", at(t, text, "nginx.ingress.kubernetes.io/"+name+":"))
		emulated := slices.ContainsFunc(ingressnginx.AnnotationsEmulated(), func(a ingressnginx.Annotation) bool { return a.Name == name })
		if !strings.Contains(h, "**nginx.ingress.kubernetes.io/"+name+"**") || strings.Contains(h, "emulated by gwdev") != emulated ||
			!strings.Contains(h, "gwdev migrate") || strings.Count(h, "gwdev migrate drops it") > 1 {
			t.Errorf("hover of %s (emulated: %v):\n%s", name, emulated, h)
		}
	}
}

// TestRenameV16Shape offers, for a field of a v1.6 shape v1.7 renamed
// (XBackend's spec.port.port), the rename to the new key; applied in the
// buffer, the unknown field is gone.
func TestRenameV16Shape(t *testing.T) {
	dir := t.TempDir()
	const xb = "apiVersion: gateway.networking.x-k8s.io/v1alpha1\nkind: XBackend\nmetadata:\n  name: b\nspec:\n  type: ExternalHostname\n  externalHostname: {hostname: api.example.com}\n  port:\n    port: 8080\n"
	if err := os.WriteFile(filepath.Join(dir, "xbackend.yaml"), []byte(xb), 0o644); err != nil {
		t.Fatal(err)
	}
	c := startClient(t, dir, nil, nil)
	p := c.path("xbackend.yaml")
	text := c.open("xbackend.yaml")
	unknown := func(d map[string][]protocol.Diagnostic) bool {
		return slices.ContainsFunc(d[p], func(x protocol.Diagnostic) bool { return strings.Contains(x.Message, `unknown field "spec.port.port"`) })
	}
	c.waitDiags("unknown field spec.port.port", unknown)
	acts := c.actions(t, "xbackend.yaml", at(t, text, "    port: 8080").Line)
	if len(acts) != 1 || acts[0].Title != "Rename port to number (Gateway API v1.7.0)" {
		t.Fatalf("actions: %+v", acts)
	}
	edits := acts[0].Edit.Changes[uriOf(p)]
	if fixed := applyEdits(text, edits); !strings.Contains(fixed, "  port:\n    number: 8080\n") {
		t.Fatalf("the rename gives:\n%s", fixed)
	}
	c.notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uriOf(p), "version": 2},
		"contentChanges": []any{map[string]any{"range": edits[0].Range, "text": edits[0].NewText}}})
	c.waitDiags("the unknown field gone", func(d map[string][]protocol.Diagnostic) bool { return !unknown(d) })
}
