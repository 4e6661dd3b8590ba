package watch

import (
	"fmt"
	"strings"
)

// nameDuplicateListeners adds to the CRD's listener uniqueness messages
// ("Listener name must be unique within the Gateway", "Combination of
// port, protocol and hostname must be unique for each listener") which
// listeners break the rule, from the object u: the CEL rule itself only
// says that some do.
func nameDuplicateListeners(u map[string]any, issues []issue) []issue {
	for i, is := range issues {
		if !strings.HasSuffix(is.field, "listeners") {
			continue
		}
		var key func(l map[string]any) string
		switch {
		case strings.Contains(is.msg, "name must be unique"):
			key = func(l map[string]any) string { return fmt.Sprintf("name %q", l["name"]) }
		case strings.Contains(is.msg, "port, protocol and hostname must be unique"):
			key = func(l map[string]any) string {
				h, ok := l["hostname"]
				if !ok {
					h = "(none)"
				}
				return fmt.Sprintf("port %v, protocol %v, hostname %v", l["port"], l["protocol"], h)
			}
		default:
			continue
		}
		if dups := duplicateListeners(u, is.field, key); dups != "" {
			issues[i].msg += " (" + dups + ")"
		}
	}
	return issues
}

// duplicateListeners lists the groups of listeners at path (spec.listeners)
// that share a key: `listeners[0] and listeners[2] have name "http"`.
func duplicateListeners(u map[string]any, path string, key func(map[string]any) string) string {
	v := any(u)
	for _, seg := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[seg]
	}
	list, _ := v.([]any)
	groups := map[string][]int{}
	var order []string
	for i, e := range list {
		l, ok := e.(map[string]any)
		if !ok {
			continue
		}
		k := key(l)
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	var out []string
	for _, k := range order {
		if idx := groups[k]; len(idx) > 1 {
			names := make([]string, len(idx))
			for j, i := range idx {
				names[j] = fmt.Sprintf("listeners[%d]", i)
			}
			out = append(out, strings.Join(names, " and ")+" have "+k)
		}
	}
	return strings.Join(out, "; ")
}

// listenerSetFilterProtocols holds a ListenerSet's listeners to the
// Gateway CRD's rule "filters may only be set when protocol is HTTP or
// HTTPS" (GEP-5224): the v1.7.0 ListenerSet CRD lacks the rule, but its
// listeners merge into a Gateway's, where filters on another protocol
// cannot run. The problem reads as the Gateway's does.
func listenerSetFilterProtocols(kind string, u map[string]any) []issue {
	if kind != "ListenerSet" {
		return nil
	}
	spec, _ := u["spec"].(map[string]any)
	ls, _ := spec["listeners"].([]any)
	var out []issue
	for i, x := range ls {
		l, _ := x.(map[string]any)
		if _, ok := l["filters"]; !ok {
			continue
		}
		if p, _ := l["protocol"].(string); p != "HTTP" && p != "HTTPS" {
			out = append(out, newIssue(ProblemInvalid, fmt.Sprintf("spec.listeners[%d]", i),
				"Invalid value: filters may only be set when protocol is HTTP or HTTPS (the Gateway's rule; the v1.7.0 ListenerSet CRD lacks it)"))
		}
	}
	return out
}
