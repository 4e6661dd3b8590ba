package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.lsp.dev/protocol"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/watch"
)

// codeActions offers quick fixes for the findings in the range: a
// parentRef whose sectionName names no listener gets one fix per
// listener of its Gateway; a backendRef to a port its Service does not
// have, one per port the Service has; a backendRef across namespaces
// that no ReferenceGrant permits, a new ReferenceGrant document at the
// end of the file; a field of a v1.6 shape that v1.7 renamed, the new
// key. The editor applies the edit; the server writes nothing.
func (s *server) codeActions(ctx context.Context, raw json.RawMessage) (any, error) {
	var p protocol.CodeActionParams
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	path, err := pathOf(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	v := s.waitView(ctx)
	out := []protocol.CodeAction{}
	if v == nil {
		return out, nil
	}
	s.mu.Lock()
	ls := v.lines(path)
	if d := s.docs[path]; d != nil && d.refused == "" {
		ls = lines(d.text)
	}
	s.mu.Unlock()
	diags := v.diagnostics()[path]
	for _, f := range v.findings {
		if f.File == "" || absPath(f.File) != path || f.Object == nil || f.Field == "" {
			continue
		}
		line := uint32(max(f.Line-1, 0))
		if line < p.Range.Start.Line || line > p.Range.End.Line {
			continue
		}
		if f.Code == report.CodeLoadError {
			// A v1.6 shape v1.7 renamed: the new key in place of the old.
			if to := watch.RenamedKey(f.Object.Kind, f.Field); to != "" && int(line) < len(ls) {
				old := f.Field[strings.LastIndexByte(f.Field, '.')+1:]
				text := ls[line]
				at := byteColumn(text, utf16Column(text, f.Column-1))
				if strings.HasPrefix(text[at:], old) {
					out = append(out, protocol.CodeAction{Title: fmt.Sprintf("Rename %s to %s (Gateway API v1.7.0)", old, to), Kind: protocol.QuickFix,
						Edit: &protocol.WorkspaceEdit{Changes: map[protocol.DocumentURI][]protocol.TextEdit{uriOf(path): {{
							Range: protocol.Range{Start: protocol.Position{Line: line, Character: utf16Column(text, f.Column-1)},
								End: protocol.Position{Line: line, Character: utf16Column(text, f.Column-1+len([]rune(old)))}}, NewText: to}}}}})
				}
			}
			continue
		}
		o := v.byKey[*f.Object]
		if o == nil {
			continue
		}
		var r *ref
		for _, x := range refsOf(o) {
			if x.field == f.Field {
				r = &x
			}
		}
		if r == nil {
			continue
		}
		var diag []protocol.Diagnostic
		for _, d := range diags {
			if d.Code == f.Code && d.Range.Start.Line == line {
				diag = append(diag, d)
			}
		}
		fix := func(title string, edits []protocol.TextEdit) {
			out = append(out, protocol.CodeAction{Title: title, Kind: protocol.QuickFix, Diagnostics: diag,
				Edit: &protocol.WorkspaceEdit{Changes: map[protocol.DocumentURI][]protocol.TextEdit{uriOf(path): edits}}})
		}
		item := int(o.src.Fields[f.Field].Line) - 1
		switch {
		case f.Code == string(gwv1.RouteReasonNoMatchingParent) && r.section != "":
			to := v.byKey[r.to]
			if to == nil {
				continue
			}
			for _, l := range list(to.tree(), "spec", "listeners") {
				if name := str(l, "name"); name != r.section {
					if e, ok := replaceValue(ls, item, "sectionName", name); ok {
						fix(fmt.Sprintf("Change sectionName to %q (%s %s)", name, str(l, "protocol"), str(l, "port")), []protocol.TextEdit{e})
					}
				}
			}
		case f.Code == string(gwv1.RouteReasonBackendNotFound) && r.port != "":
			for _, svc := range v.state.Result.Objects.Services {
				if svc.Namespace != r.to.Namespace || svc.Name != r.to.Name {
					continue
				}
				for _, sp := range svc.Spec.Ports {
					if port := strconv.Itoa(int(sp.Port)); port != r.port {
						if e, ok := replaceValue(ls, item, "port", port); ok {
							fix(fmt.Sprintf("Change port to %s (the Service's port %s)", port, orDefault(sp.Name, port)), []protocol.TextEdit{e})
						}
					}
				}
			}
		case f.Code == string(gwv1.RouteReasonRefNotPermitted):
			doc, err := referenceGrant(*r)
			if err != nil {
				continue
			}
			end := protocol.Position{Line: uint32(len(ls))}
			if len(ls) > 0 && ls[len(ls)-1] != "" {
				end = protocol.Position{Line: uint32(len(ls) - 1), Character: utf16Column(ls[len(ls)-1], len([]rune(ls[len(ls)-1])))}
				doc = "\n" + doc
			}
			fix(fmt.Sprintf("Add a ReferenceGrant in %s letting %ss in %s use %s %s", r.to.Namespace, r.from.key.Kind, r.from.key.Namespace, r.to.Kind, r.to.Name),
				[]protocol.TextEdit{{Range: protocol.Range{Start: end, End: end}, NewText: doc}})
		}
	}
	return out, nil
}

// replaceValue is the edit replacing the value of key in the list item
// starting at line item (0-based) of ls (false: the item has no such key).
func replaceValue(ls []string, item int, key, val string) (protocol.TextEdit, bool) {
	if item < 0 || item >= len(ls) {
		return protocol.TextEdit{}, false
	}
	m := keyLine.FindStringSubmatch(ls[item])
	if m == nil {
		return protocol.TextEdit{}, false
	}
	indent := len(m[1]) + len(m[2])
	_, end := docBounds(ls, item)
	for i := item; i < end; i++ {
		km := keyLine.FindStringSubmatch(ls[i])
		if km == nil {
			continue
		}
		in := len(km[1]) + len(km[2])
		if i > item && (in < indent || (in == indent && km[2] != "")) {
			break
		}
		if in != indent || km[3] != key {
			continue
		}
		start := len(km[1]) + len(km[2]) + len(km[3]) + 1
		rest := ls[i][start:]
		lead := len(rest) - len(strings.TrimLeft(rest, " "))
		if c := strings.Index(rest, " #"); c >= 0 {
			rest = rest[:c]
		}
		stop := start + len(strings.TrimRight(rest, " "))
		return protocol.TextEdit{Range: protocol.Range{
			Start: protocol.Position{Line: uint32(i), Character: utf16Column(ls[i], len([]rune(ls[i][:start+lead])))},
			End:   protocol.Position{Line: uint32(i), Character: utf16Column(ls[i], len([]rune(ls[i][:stop])))}}, NewText: val}, true
	}
	return protocol.TextEdit{}, false
}

// referenceGrant is a new YAML document: the ReferenceGrant that permits
// r, rendered by the one YAML renderer.
func referenceGrant(r ref) (string, error) {
	k := engine.KindNamed("ReferenceGrant")
	from := engine.KindNamed(r.from.key.Kind)
	to := engine.KindNamed(r.to.Kind)
	if k == nil || from == nil || to == nil {
		return "", fmt.Errorf("unknown kind")
	}
	name := gwv1.ObjectName(r.to.Name)
	g := gwv1.ReferenceGrant{
		Spec: gwv1.ReferenceGrantSpec{
			From: []gwv1.ReferenceGrantFrom{{Group: gwv1.Group(from.Group), Kind: gwv1.Kind(from.Kind), Namespace: gwv1.Namespace(r.from.key.Namespace)}},
			To:   []gwv1.ReferenceGrantTo{{Group: gwv1.Group(to.Group), Kind: gwv1.Kind(to.Kind), Name: &name}},
		},
	}
	g.APIVersion = k.Group + "/" + k.Version
	g.Kind = k.Kind
	g.Name = "allow-" + strings.ToLower(r.from.key.Kind) + "s-from-" + r.from.key.Namespace
	g.Namespace = r.to.Namespace
	b, err := report.YAML(&g)
	if err != nil {
		return "", err
	}
	doc := strings.Replace(string(b), "  creationTimestamp: null\n", "", 1)
	if !strings.HasSuffix(doc, "\n") {
		doc += "\n"
	}
	return "---\n" + doc, nil
}
