package lsp

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/gwdev/gwdev/engine"
)

// completion offers, for the value being typed: the workspace's Gateways
// and ListenerSets (a parentRef's name), their listeners (sectionName)
// and ports, Services and their ports (a backendRef's name and port),
// namespaces, the kinds gwdev knows (kind:), and elsewhere the enum
// values the CRD bundle in use allows for the field (a match's or a
// filter's type). It reads the buffer as it is, parsed or not.
func (s *server) completion(ctx context.Context, raw json.RawMessage) (any, error) {
	var p protocol.CompletionParams
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	path, err := pathOf(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	var text string
	d := s.docs[path]
	if d != nil {
		text = d.text
	}
	s.mu.Unlock()
	v := s.waitView(ctx)
	if v == nil {
		return &protocol.CompletionList{Items: []protocol.CompletionItem{}}, nil
	}
	ls := v.lines(path)
	if d != nil {
		ls = lines(text)
	}
	line := int(p.Position.Line)
	col := 0
	if line < len(ls) {
		col = byteColumn(ls[line], p.Position.Character)
	}
	spot := spotAt(ls, line, col)
	items := v.complete(spot)
	if len(items) == 0 && spot.inValue && spot.key != "" {
		// An enum of the CRD bundle in use: a match's type, a filter's type…
		s.mu.Lock()
		proj := s.session.Project()
		s.mu.Unlock()
		for _, e := range proj.Enum(spot.apiVersion, spot.kind, append(slices.Clone(spot.parents), spot.key)) {
			items = append(items, protocol.CompletionItem{Label: e, Detail: spot.kind + " " + strings.Join(append(slices.Clone(spot.parents), spot.key), "."), Kind: protocol.CompletionItemKindEnumMember})
		}
	}
	out := &protocol.CompletionList{Items: []protocol.CompletionItem{}}
	for _, it := range items {
		if strings.HasPrefix(strings.ToLower(it.Label), strings.ToLower(spot.value)) {
			out.Items = append(out.Items, it)
		}
	}
	return out, nil
}

// complete lists the values that fit the spot.
func (v *view) complete(s yamlSpot) []protocol.CompletionItem {
	if !s.inValue {
		return nil
	}
	ns := s.namespace
	if ns == "" {
		ns = "default"
	}
	if n := s.siblings["namespace"]; n != "" {
		ns = n
	}
	objs := v.state.Result.Objects
	item := func(label, detail string, kind protocol.CompletionItemKind) protocol.CompletionItem {
		return protocol.CompletionItem{Label: label, Detail: detail, Kind: kind}
	}
	var out []protocol.CompletionItem
	switch {
	case s.key == "kind" && len(s.parents) == 0:
		for _, k := range engine.Kinds() {
			if k.Kind != "" {
				out = append(out, item(k.Kind, k.Group+"/"+k.Version, protocol.CompletionItemKindClass))
			}
		}
	case s.key == "namespace" && (s.under("parentRefs") || s.under("backendRefs") || s.under("targetRefs") || s.under("parentRef")):
		for _, n := range v.namespaces() {
			out = append(out, item(n, "namespace", protocol.CompletionItemKindModule))
		}
	case s.under("parentRefs") || s.under("parentRef"):
		gw := v.byKey[engine.ObjectKey{Kind: orDefault(s.siblings["kind"], "Gateway"), Namespace: ns, Name: s.siblings["name"]}]
		switch s.key {
		case "name":
			for _, g := range objs.Gateways {
				if g.Namespace == ns {
					out = append(out, item(g.Name, "Gateway "+g.Namespace+"/"+g.Name, protocol.CompletionItemKindClass))
				}
			}
			for _, l := range objs.ListenerSets {
				if l.Namespace == ns && s.siblings["kind"] == "ListenerSet" {
					out = append(out, item(l.Name, "ListenerSet "+l.Namespace+"/"+l.Name, protocol.CompletionItemKindClass))
				}
			}
		case "sectionName":
			if gw != nil {
				for _, l := range list(gw.tree(), "spec", "listeners") {
					out = append(out, item(str(l, "name"), str(l, "protocol")+" "+str(l, "port")+" "+str(l, "hostname"), protocol.CompletionItemKindField))
				}
			}
		case "port":
			if gw != nil {
				seen := map[string]bool{}
				for _, l := range list(gw.tree(), "spec", "listeners") {
					if p := str(l, "port"); !seen[p] {
						seen[p] = true
						out = append(out, item(p, "listener "+str(l, "name"), protocol.CompletionItemKindValue))
					}
				}
			}
		}
	case s.under("backendRefs"):
		switch s.key {
		case "name":
			for _, svc := range objs.Services {
				if svc.Namespace == ns {
					out = append(out, item(svc.Name, "Service "+svc.Namespace+"/"+svc.Name, protocol.CompletionItemKindInterface))
				}
			}
		case "port":
			for _, svc := range objs.Services {
				if svc.Namespace == ns && svc.Name == s.siblings["name"] {
					for _, p := range svc.Spec.Ports {
						out = append(out, item(strconv.Itoa(int(p.Port)), "port "+p.Name, protocol.CompletionItemKindValue))
					}
				}
			}
		}
	}
	return out
}

// namespaces are the namespaces the workspace's objects are in or
// declare, sorted.
func (v *view) namespaces() []string {
	seen := map[string]bool{}
	for _, n := range v.state.Result.Objects.Namespaces {
		seen[n.Name] = true
	}
	for k := range v.byKey {
		if k.Namespace != "" {
			seen[k.Namespace] = true
		}
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
