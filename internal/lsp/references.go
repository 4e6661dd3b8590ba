package lsp

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"

	"go.lsp.dev/protocol"
)

// location is where an object, or one of its list items (field), is
// written.
func (v *view) location(o *placed, field string) protocol.Location {
	line, col := o.src.Line, o.src.Column
	if pos, ok := o.src.Fields[field]; ok && field != "" {
		line, col = int(pos.Line), int(pos.Column)
	}
	return protocol.Location{URI: uriOf(o.path), Range: v.findingRange(o.path, line, col)}
}

// definition goes from a reference to what it names: a parentRef to the
// Gateway's (or ListenerSet's) listener, a backendRef to the Service, a
// policy's targetRef to its target, a ListenerSet's parentRef to its
// Gateway; a reference across namespaces also to the ReferenceGrants
// that permit it.
func (s *server) definition(ctx context.Context, raw json.RawMessage) (any, error) {
	var p protocol.DefinitionParams
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	c, err := s.cursorAt(ctx, p.TextDocumentPositionParams)
	if err != nil || c == nil || c.obj == nil {
		return nil, err
	}
	r := c.refAt()
	if r == nil {
		// The object as a whole: its references (a ListenerSet's parent,
		// a policy's targets).
		for _, x := range refsOf(c.obj) {
			if !strings.HasPrefix(x.field, "spec.parentRefs[") && !strings.Contains(x.field, ".backendRefs[") {
				r = &x
				break
			}
		}
	}
	if r == nil {
		return []protocol.Location{}, nil
	}
	out := []protocol.Location{}
	if to := c.v.byKey[r.to]; to != nil {
		field := ""
		if r.section != "" {
			if i := listenerIndex(to, r.section); i >= 0 {
				field = "spec.listeners[" + itoa(i) + "]"
			}
		}
		out = append(out, c.v.location(to, field))
	}
	for _, g := range c.v.grantsFor(*r) {
		out = append(out, c.v.location(g, ""))
	}
	return out, nil
}

// references lists what refers to the object at the position: the
// parentRefs naming a Gateway (only those naming the listener when the
// position is in one), the backendRefs naming a Service, the targetRefs
// naming any object; for a ReferenceGrant, the references it permits.
func (s *server) references(ctx context.Context, raw json.RawMessage) (any, error) {
	var p protocol.ReferenceParams
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	c, err := s.cursorAt(ctx, p.TextDocumentPositionParams)
	if err != nil || c == nil || c.obj == nil {
		return nil, err
	}
	listener := ""
	if idx := itemIndex(c.field); strings.HasPrefix(c.field, "spec.listeners[") && len(idx) == 1 {
		listener = str(c.obj.tree(), "spec", "listeners", idx[0], "name")
	}
	out := []protocol.Location{}
	for _, objs := range c.v.files {
		for _, o := range objs {
			for _, r := range refsOf(o) {
				if c.obj.key.Kind == "ReferenceGrant" {
					if slices.Contains(c.v.grantsFor(r), c.obj) {
						out = append(out, c.v.location(o, r.field))
					}
					continue
				}
				if r.to != c.obj.key || (listener != "" && r.section != "" && r.section != listener) {
					continue
				}
				out = append(out, c.v.location(o, r.field))
			}
		}
	}
	if p.Context.IncludeDeclaration {
		out = append(out, c.v.location(c.obj, c.field))
	}
	slices.SortFunc(out, compareLocations)
	return out, nil
}

// symbolKind is how an editor draws an object of kind.
func symbolKind(kind string) protocol.SymbolKind {
	switch {
	case kind == "Gateway" || kind == "ListenerSet" || kind == "GatewayClass":
		return protocol.SymbolKindClass
	case strings.HasSuffix(kind, "Route") || kind == "Ingress":
		return protocol.SymbolKindMethod
	case kind == "Service" || kind == "XBackend":
		return protocol.SymbolKindInterface
	case strings.HasSuffix(kind, "Policy") || kind == "ReferenceGrant":
		return protocol.SymbolKindProperty
	}
	return protocol.SymbolKindObject
}

// objectRange is the lines an object takes in its file.
func (v *view) objectRange(o *placed) protocol.Range {
	last := o.end - 1
	if o.end == 0 {
		last = len(v.lines(o.path))
	}
	for last > o.src.Line && strings.TrimSpace(v.line(o.path, last)) == "" || last > o.src.Line && strings.TrimSpace(v.line(o.path, last)) == "---" {
		last--
	}
	if last < o.src.Line {
		last = o.src.Line
	}
	return protocol.Range{Start: protocol.Position{Line: uint32(max(o.src.Line-1, 0))},
		End: protocol.Position{Line: uint32(max(last-1, 0)), Character: utf16Column(v.line(o.path, last), len([]rune(v.line(o.path, last))))}}
}

// documentSymbols are the objects of the file (each document of a
// multi-document file), with their listeners and rules as children.
func (s *server) documentSymbols(ctx context.Context, raw json.RawMessage) (any, error) {
	var p protocol.DocumentSymbolParams
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	path, err := pathOf(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	v := s.waitView(ctx)
	out := []protocol.DocumentSymbol{}
	if v == nil {
		return out, nil
	}
	for _, o := range v.files[path] {
		rng := v.objectRange(o)
		sym := protocol.DocumentSymbol{Name: o.key.Kind + " " + o.key.Name, Detail: o.key.Namespace, Kind: symbolKind(o.key.Kind),
			Range: rng, SelectionRange: v.location(o, "").Range}
		for i, l := range list(o.tree(), "spec", "listeners") {
			loc := v.location(o, "spec.listeners["+itoa(i)+"]")
			sym.Children = append(sym.Children, protocol.DocumentSymbol{Name: "listener " + str(l, "name"),
				Detail: str(l, "protocol") + " " + str(l, "port"), Kind: protocol.SymbolKindField, Range: loc.Range, SelectionRange: loc.Range})
		}
		for i, r := range list(o.tree(), "spec", "rules") {
			loc := v.location(o, "spec.rules["+itoa(i)+"]")
			name := "rule " + itoa(i)
			if n := str(r, "name"); n != "" {
				name += " " + n
			}
			sym.Children = append(sym.Children, protocol.DocumentSymbol{Name: name, Kind: protocol.SymbolKindFunction, Range: loc.Range, SelectionRange: loc.Range})
		}
		out = append(out, sym)
	}
	return out, nil
}

// workspaceSymbols are the objects of the workspace whose
// Kind/namespace/name contains the query (any case).
func (s *server) workspaceSymbols(ctx context.Context, raw json.RawMessage) (any, error) {
	var p protocol.WorkspaceSymbolParams
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	v := s.waitView(ctx)
	out := []protocol.SymbolInformation{}
	if v == nil {
		return out, nil
	}
	q := strings.ToLower(p.Query)
	for _, objs := range v.files {
		for _, o := range objs {
			if !strings.Contains(strings.ToLower(o.key.String()), q) {
				continue
			}
			out = append(out, protocol.SymbolInformation{Name: o.key.Kind + " " + o.key.Name, Kind: symbolKind(o.key.Kind),
				ContainerName: o.key.Namespace, Location: v.location(o, "")})
		}
	}
	slices.SortFunc(out, func(a, b protocol.SymbolInformation) int { return compareLocations(a.Location, b.Location) })
	return out, nil
}

// compareLocations orders locations by file, then position.
func compareLocations(a, b protocol.Location) int {
	if c := strings.Compare(string(a.URI), string(b.URI)); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Range.Start.Line, b.Range.Start.Line); c != 0 {
		return c
	}
	return cmp.Compare(a.Range.Start.Character, b.Range.Start.Character)
}
