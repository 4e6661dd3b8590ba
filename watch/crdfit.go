package watch

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// fieldNode is a CRD schema as the bundle checks read it.
type fieldNode = schemaNode

// prepare decodes additionalProperties and the enum values of n and every
// node below it.
func (n *schemaNode) prepare() {
	if n == nil {
		return
	}
	for _, p := range n.Properties {
		p.prepare()
	}
	n.Items.prepare()
	if len(n.AdditionalProperties) > 0 && n.AdditionalProperties[0] == '{' {
		var ap schemaNode
		if json.Unmarshal(n.AdditionalProperties, &ap) == nil {
			ap.prepare()
			n.additional = &ap
		}
	}
	if len(n.Enum) > 0 {
		n.enum = map[string]bool{}
		for _, e := range n.Enum {
			var v any
			if json.Unmarshal(e, &v) != nil {
				continue
			}
			if str, ok := v.(string); ok {
				n.enum[str] = true // strings by value: no encoding per check
				continue
			}
			b, _ := json.Marshal(v)
			n.enum[string(b)] = true
		}
	}
}

// misfit returns why the object u does not fit the schema n: the first
// field the schema does not have, or the first value an enum does not
// allow ("" when it fits). The root's apiVersion, kind, metadata and status
// are not looked at. It does not modify u, and allocates nothing when u
// fits (it runs for every object loaded without a bundle).
func (n *schemaNode) misfit(u map[string]any) string {
	// Every key is looked at and the misfit under the smallest key kept, so
	// that the answer does not depend on the map's iteration order.
	var best *misfitPath
	var bestKey string
	for k, v := range u {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		if bad := n.child(k).misfitValue(v); bad != nil && (best == nil || k < bestKey) {
			best, bestKey = bad, k
		}
	}
	if best == nil {
		return ""
	}
	return best.at(bestKey).String()
}

// misfitPath is where a value does not fit, built on the way back up.
type misfitPath struct {
	// segs are the path's segments, innermost first ("name", "[2]").
	segs []string
	// value is the value an enum refuses, as JSON ("" : an unknown field).
	value string
}

func (m *misfitPath) at(seg string) *misfitPath {
	m.segs = append(m.segs, seg)
	return m
}

func (m *misfitPath) String() string {
	var b strings.Builder
	for i := len(m.segs) - 1; i >= 0; i-- {
		s := m.segs[i]
		if i < len(m.segs)-1 && !strings.HasPrefix(s, "[") {
			b.WriteByte('.')
		}
		b.WriteString(s)
	}
	if m.value != "" {
		return "does not allow " + b.String() + ": " + m.value
	}
	return "does not have field " + b.String()
}

// child is the schema of field k of an object of schema n (nil: unknown).
func (n *schemaNode) child(k string) *schemaNode {
	if n == nil {
		return nil
	}
	if p, ok := n.Properties[k]; ok {
		return p
	}
	return n.additional
}

func (n *schemaNode) misfitValue(v any) *misfitPath {
	if n == nil {
		return &misfitPath{}
	}
	if n.XPreserveUnknownFields || v == nil {
		return nil
	}
	switch v := v.(type) {
	case map[string]any:
		var best *misfitPath // the misfit under the smallest key: deterministic
		var bestKey string
		for k, c := range v {
			if n.XEmbeddedResource && (k == "apiVersion" || k == "kind" || k == "metadata") {
				continue
			}
			if bad := n.child(k).misfitValue(c); bad != nil && (best == nil || k < bestKey) {
				best, bestKey = bad, k
			}
		}
		if best != nil {
			return best.at(bestKey)
		}
	case []any:
		for i, c := range v {
			if bad := n.Items.misfitValue(c); bad != nil {
				return bad.at(fmt.Sprintf("[%d]", i))
			}
		}
	case string:
		if n.enum != nil && !n.enum[v] {
			b, _ := json.Marshal(v)
			return &misfitPath{value: string(b)}
		}
	default:
		if n.enum != nil {
			if b, _ := json.Marshal(v); !n.enum[string(b)] {
				return &misfitPath{value: string(b)}
			}
		}
	}
	return nil
}

// hasPath reports whether the schema n has the field at path, as the
// pruner writes it ("spec.listeners[0].filters", map keys as fields).
func (n *schemaNode) hasPath(path string) bool {
	for _, seg := range strings.Split(path, ".") {
		name, idx, _ := strings.Cut(seg, "[")
		n = n.child(name)
		if n == nil {
			return false
		}
		for idx != "" {
			n = n.Items
			if n == nil {
				return false
			}
			_, idx, _ = strings.Cut(idx, "[")
		}
	}
	return true
}

// where says which embedded bundles satisfy has, for messages: "in the
// standard channel from v1.6 (v1.6.3-standard and newer)", "only in the
// experimental channel (v1.4.1-experimental, v1.5.1-experimental)", or
// "in no embedded bundle".
func whereBundles(has func(b *CRDBundle) bool) string {
	var std, exp []string
	allStd := []string{}
	for _, name := range CRDBundleNames() {
		b, err := EmbeddedCRDBundle(name)
		if err != nil {
			continue
		}
		if b.Channel == "standard" {
			allStd = append(allStd, name)
		}
		if has(b) {
			if b.Channel == "standard" {
				std = append(std, name)
			} else {
				exp = append(exp, name)
			}
		}
	}
	switch {
	case len(std) > 0 && slices.Equal(std, allStd[len(allStd)-len(std):]):
		rel, _, _ := strings.Cut(std[0], "-")
		if len(std) == 1 {
			return fmt.Sprintf("in the standard channel from %s (%s)", minorOf(rel), std[0])
		}
		return fmt.Sprintf("in the standard channel from %s (%s and newer)", minorOf(rel), std[0])
	case len(std) > 0:
		return "in " + strings.Join(std, ", ")
	case len(exp) > 0:
		return "only in the experimental channel (" + strings.Join(exp, ", ") + ")"
	}
	return "in no embedded bundle"
}

// minorOf turns "v1.6.3" into "v1.6".
func minorOf(release string) string {
	if i := strings.LastIndexByte(release, '.'); i > 0 {
		return release[:i]
	}
	return release
}
