package watch

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// CRDFieldPaths returns every field path of the embedded CRD schema of a
// kind, over all its served versions, sorted: "spec.rules[].name", with
// "[]" for list items and "{}" for map values. Paths under status and
// metadata are left out (gwdev writes status; metadata is Kubernetes'),
// and so are apiVersion and kind. It returns an error for a kind without
// an embedded CRD. The field guard test uses it, so that the schemas it
// checks are the ones gwdev validates against.
func CRDFieldPaths(kind string) ([]string, error) {
	k := kindNamed(kind)
	if k == nil || k.crd == "" {
		return nil, fmt.Errorf("no embedded CRD for kind %q", kind)
	}
	data, err := crdFS.ReadFile(embeddedCRDPath(k.crd))
	if err != nil {
		return nil, err
	}
	var versions map[string]schemaNode
	if err := json.Unmarshal(data, &versions); err != nil {
		return nil, fmt.Errorf("decoding embedded CRD %s: %w", k.crd, err)
	}
	seen := map[string]bool{}
	for _, v := range versions {
		for name, p := range v.Properties {
			if name == "spec" {
				p.paths(name, seen)
			}
		}
	}
	out := make([]string, 0, len(seen))
	for p := range seen {
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

// CRDKinds lists the kinds whose CRD the loader embeds, in registry order.
func CRDKinds() []string {
	var out []string
	for _, k := range allKinds {
		if k.crd != "" {
			out = append(out, k.kind)
		}
	}
	return out
}

// schemaNode is the part of an OpenAPI schema CRDFieldPaths and the
// bundle fit checks (crdfit.go) read.
type schemaNode struct {
	Properties             map[string]*schemaNode `json:"properties"`
	Items                  *schemaNode            `json:"items"`
	AdditionalProperties   json.RawMessage        `json:"additionalProperties"`
	Enum                   []json.RawMessage      `json:"enum"`
	XPreserveUnknownFields bool                   `json:"x-kubernetes-preserve-unknown-fields"`
	XEmbeddedResource      bool                   `json:"x-kubernetes-embedded-resource"`

	// Set by prepare: the additionalProperties schema (nil: none) and the
	// enum values, strings as they are, others as compact JSON (nil: any
	// value).
	additional *schemaNode
	enum       map[string]bool
}

func (n *schemaNode) paths(at string, seen map[string]bool) {
	if n == nil {
		return
	}
	seen[at] = true
	for name, p := range n.Properties {
		p.paths(at+"."+name, seen)
	}
	if n.Items != nil {
		n.Items.childPaths(at+"[]", seen)
	}
	if len(n.AdditionalProperties) > 0 && strings.HasPrefix(string(n.AdditionalProperties), "{") {
		var ap schemaNode
		if json.Unmarshal(n.AdditionalProperties, &ap) == nil {
			ap.childPaths(at+"{}", seen)
		}
	}
}

// childPaths records the fields below a list item or map value (the item
// itself is its list's path).
func (n *schemaNode) childPaths(at string, seen map[string]bool) {
	for name, p := range n.Properties {
		p.paths(at+"."+name, seen)
	}
	if n.Items != nil {
		n.Items.childPaths(at+"[]", seen)
	}
}
