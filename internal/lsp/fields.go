package lsp

import (
	"encoding/json"
	"strconv"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
)

// This file reads objects of any kind through their JSON form (the
// fields as written in manifests), for what hover, definition and
// references point at: parentRefs, backendRefs, listeners, targetRefs.

// tree is an object as a JSON tree.
type tree = map[string]any

// treeOf returns o's object as a JSON tree, computed once.
func (o *placed) tree() tree {
	o.jsonOnce.Do(func() {
		if b, err := json.Marshal(o.obj); err == nil {
			_ = json.Unmarshal(b, &o.json)
		}
		if o.json == nil {
			o.json = tree{}
		}
	})
	return o.json
}

// get walks t by keys (string) and list indexes (int); nil when absent.
func get(t any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := t.(map[string]any)
			if !ok {
				return nil
			}
			t = m[k]
		case int:
			l, ok := t.([]any)
			if !ok || k < 0 || k >= len(l) {
				return nil
			}
			t = l[k]
		}
	}
	return t
}

// str is get as a string ("" : absent or not a string).
func str(t any, path ...any) string {
	switch v := get(t, path...).(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// list is get as a list (nil: absent).
func list(t any, path ...any) []any {
	l, _ := get(t, path...).([]any)
	return l
}

// ref is one reference an object makes: a route's parentRef or
// backendRef, a policy's targetRef.
type ref struct {
	// from is the object making it; field the path of the item (as in
	// Source.Fields: "spec.parentRefs[0]", "spec.rules[0].backendRefs[1]",
	// "spec.targetRefs[0]").
	from  *placed
	field string
	// to is the object named; section the sectionName ("" : none); port
	// the port ("" : none).
	to            engine.ObjectKey
	section, port string
}

// refsOf lists the references o makes.
func refsOf(o *placed) []ref {
	t := o.tree()
	ns := o.key.Namespace
	target := func(item any, defKind string) engine.ObjectKey {
		kind := str(item, "kind")
		if kind == "" {
			kind = defKind
		}
		n := str(item, "namespace")
		if n == "" {
			n = ns
		}
		return engine.ObjectKey{Kind: kind, Namespace: n, Name: str(item, "name")}
	}
	var out []ref
	if engine.RouteOf(o.obj) != nil {
		for i, pr := range list(t, "spec", "parentRefs") {
			out = append(out, ref{from: o, field: "spec.parentRefs[" + itoa(i) + "]", to: target(pr, "Gateway"),
				section: str(pr, "sectionName"), port: str(pr, "port")})
		}
		for i, rule := range list(t, "spec", "rules") {
			for j, br := range list(rule, "backendRefs") {
				out = append(out, ref{from: o, field: "spec.rules[" + itoa(i) + "].backendRefs[" + itoa(j) + "]",
					to: target(br, "Service"), port: str(br, "port")})
			}
		}
	}
	for i, tr := range list(t, "spec", "targetRefs") {
		out = append(out, ref{from: o, field: "spec.targetRefs[" + itoa(i) + "]", to: engine.ObjectKey{Kind: str(tr, "kind"), Namespace: ns, Name: str(tr, "name")},
			section: str(tr, "sectionName")})
	}
	if tr := get(t, "spec", "targetRef"); tr != nil {
		out = append(out, ref{from: o, field: "spec.targetRef", to: engine.ObjectKey{Kind: str(tr, "kind"), Namespace: ns, Name: str(tr, "name")}})
	}
	if ls, ok := o.obj.(*gwv1.ListenerSet); ok {
		pr := ls.Spec.ParentRef
		to := engine.ObjectKey{Kind: "Gateway", Namespace: ns, Name: string(pr.Name)}
		if pr.Kind != nil {
			to.Kind = string(*pr.Kind)
		}
		if pr.Namespace != nil {
			to.Namespace = string(*pr.Namespace)
		}
		out = append(out, ref{from: o, field: "spec.parentRef", to: to})
	}
	return out
}

// listenerIndex is the index of the listener named name in o's
// spec.listeners (-1: none).
func listenerIndex(o *placed, name string) int {
	for i, l := range list(o.tree(), "spec", "listeners") {
		if str(l, "name") == name {
			return i
		}
	}
	return -1
}

// grantsFor lists the ReferenceGrants that permit r (a reference across
// namespaces; nil when r stays in its namespace or none permits it).
func (v *view) grantsFor(r ref) []*placed {
	if r.to.Namespace == r.from.key.Namespace {
		return nil
	}
	var out []*placed
	for _, g := range v.state.Result.Objects.ReferenceGrants {
		if g.Namespace != r.to.Namespace {
			continue
		}
		from, to := false, false
		for _, f := range g.Spec.From {
			from = from || (string(f.Kind) == r.from.key.Kind && string(f.Namespace) == r.from.key.Namespace)
		}
		for _, t := range g.Spec.To {
			to = to || (string(t.Kind) == r.to.Kind && (t.Name == nil || string(*t.Name) == r.to.Name))
		}
		if from && to {
			if pl := v.byKey[engine.ObjectKey{Kind: "ReferenceGrant", Namespace: g.Namespace, Name: g.Name}]; pl != nil {
				out = append(out, pl)
			}
		}
	}
	return out
}
