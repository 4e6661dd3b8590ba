package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/ingressnginx"
	"github.com/gwdev/gwdev/internal/report"
)

// cursor is what a position in a document points at in the last State.
type cursor struct {
	v    *view
	path string
	// line is 1-based.
	line int
	// obj is the object written there (nil: none); field the list item
	// the line is in ("" : the object as a whole).
	obj   *placed
	field string
}

// cursorAt resolves a document position (nil: no State yet, or a bad
// URI).
func (s *server) cursorAt(ctx context.Context, p protocol.TextDocumentPositionParams) (*cursor, error) {
	path, err := pathOf(p.TextDocument.URI)
	if err != nil {
		return nil, err
	}
	v := s.waitView(ctx)
	if v == nil {
		return nil, nil
	}
	c := &cursor{v: v, path: path, line: int(p.Position.Line) + 1}
	if c.obj = v.objectAt(path, c.line); c.obj != nil {
		c.field = v.fieldAt(c.obj, c.line)
	}
	return c, nil
}

// refAt is the reference made by the list item at the cursor (nil: none).
func (c *cursor) refAt() *ref {
	if c.obj == nil || c.field == "" {
		return nil
	}
	for _, r := range refsOf(c.obj) {
		if r.field == c.field {
			return &r
		}
	}
	return nil
}

// hover answers with what the engine computed about the object, the
// parentRef, the backendRef or the listener at the position.
func (s *server) hover(ctx context.Context, raw json.RawMessage) (any, error) {
	var p protocol.HoverParams
	if err := params(raw, &p); err != nil {
		return nil, err
	}
	c, err := s.cursorAt(ctx, p.TextDocumentPositionParams)
	if err != nil || c == nil || c.obj == nil {
		return nil, err
	}
	var md string
	idx := itemIndex(c.field)
	switch {
	case c.v.annotationAt(c.obj, c.line) != "":
		md = c.v.hoverAnnotation(c.obj, c.v.annotationAt(c.obj, c.line))
	case strings.HasPrefix(c.field, "spec.parentRefs[") && len(idx) == 1:
		md = c.v.hoverParentRef(c.obj, idx[0])
	case strings.Contains(c.field, ".backendRefs[") && len(idx) == 2:
		md = c.v.hoverBackendRef(c.obj, idx[0], idx[1])
	case strings.HasPrefix(c.field, "spec.listeners[") && len(idx) == 1:
		md = c.v.hoverListener(c.obj, idx[0])
	case strings.HasPrefix(c.field, "spec.rules[") && len(idx) == 1:
		md = c.v.hoverRule(c.obj, idx[0])
	}
	if md == "" {
		md = c.v.hoverObject(c.obj)
	}
	return &protocol.Hover{Contents: protocol.MarkupContent{Kind: protocol.Markdown, Value: md}}, nil
}

// yamlBlock renders v as a fenced YAML block through the one YAML
// renderer.
func yamlBlock(v any) string {
	b, err := report.YAML(v)
	if err != nil {
		return ""
	}
	return "```yaml\n" + string(b) + "```\n"
}

// hoverObject is the object's computed status (what a cluster would
// write) and its findings.
func (v *view) hoverObject(o *placed) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**\n\n", o.key)
	if st := get(o.tree(), "status"); st != nil {
		b.WriteString("status, as a conformant controller would write it:\n\n")
		b.WriteString(yamlBlock(st))
	} else {
		b.WriteString("no status: gwdev does not manage this object\n")
	}
	v.writeFindings(&b, o, "")
	return b.String()
}

// writeFindings lists the findings about o (only those on field or a
// field inside it, unless field is "").
func (v *view) writeFindings(b *strings.Builder, o *placed, field string) {
	first := true
	for _, f := range v.findings {
		if f.Object == nil || *f.Object != o.key || (field != "" && f.Field != field && !strings.HasPrefix(f.Field, field+".")) {
			continue
		}
		if first {
			b.WriteString("\nfindings:\n")
			first = false
		}
		fmt.Fprintf(b, "- %s %s: %s\n", f.Severity, f.Code, f.Message)
	}
}

// hoverParentRef says where the route's parentRef i attached and, if it
// did not, why: the route's status entry for that parent.
func (v *view) hoverParentRef(o *placed, i int) string {
	t := o.tree()
	pr := get(t, "spec", "parentRefs", i)
	if pr == nil {
		return ""
	}
	var b strings.Builder
	r := refsOf(o)[i]
	fmt.Fprintf(&b, "**parentRef %d** → %s", i, r.to)
	if r.section != "" {
		fmt.Fprintf(&b, " listener %q", r.section)
	}
	if r.port != "" {
		fmt.Fprintf(&b, " port %s", r.port)
	}
	b.WriteString("\n\n")
	for _, ps := range list(t, "status", "parents") {
		ref := get(ps, "parentRef")
		if str(ref, "name") != r.to.Name || str(ref, "sectionName") != r.section || str(ref, "port") != r.port ||
			(str(ref, "namespace") != "" && str(ref, "namespace") != r.to.Namespace) {
			continue
		}
		accepted := false
		for _, c := range list(ps, "conditions") {
			if str(c, "type") == "Accepted" && str(c, "status") == "True" {
				accepted = true
			}
		}
		if accepted {
			b.WriteString("attached")
			if p := v.byKey[r.to]; p != nil {
				fmt.Fprintf(&b, " (%s:%d)", p.path, p.src.Line)
			}
			b.WriteString("\n\n")
		} else {
			b.WriteString("**not attached**\n\n")
		}
		b.WriteString(yamlBlock(get(ps, "conditions")))
		return b.String()
	}
	b.WriteString("no status for this parent: gwdev does not manage it\n")
	return b.String()
}

// hoverBackendRef says what backendRef j of rule i resolves to (a mapping,
// EndpointSlices, an ExternalName, the echo backend, or why it is
// invalid) and its share of the rule's weight.
func (v *view) hoverBackendRef(o *placed, i, j int) string {
	rule := get(o.tree(), "spec", "rules", i)
	refs := list(rule, "backendRefs")
	if j >= len(refs) {
		return ""
	}
	weight := func(br any) int {
		if w := str(br, "weight"); w != "" {
			n, _ := strconv.Atoi(w)
			return n
		}
		return 1
	}
	total := 0
	for _, br := range refs {
		total += weight(br)
	}
	var b strings.Builder
	r := refsOf(o)
	for _, x := range r {
		if x.field == "spec.rules["+itoa(i)+"].backendRefs["+itoa(j)+"]" {
			fmt.Fprintf(&b, "**backendRef** → %s", x.to)
			if x.port != "" {
				fmt.Fprintf(&b, " port %s", x.port)
			}
			b.WriteString("\n\n")
		}
	}
	w := weight(refs[j])
	if total > 0 {
		fmt.Fprintf(&b, "weight %d of %d: %.0f%% of the rule's requests\n\n", w, total, 100*float64(w)/float64(total))
	} else {
		b.WriteString("weight 0: no requests (every backendRef of the rule has weight 0)\n\n")
	}
	if be := v.servedBackend(o.key, i, j); be != nil {
		switch {
		case be.Invalid != "":
			fmt.Fprintf(&b, "**invalid**: %s (requests that pick it get a 500)\n", be.Invalid)
		case be.Target != nil:
			fmt.Fprintf(&b, "resolves to: %s", be.Target.Kind)
			if len(be.Target.Addresses) > 0 {
				fmt.Fprintf(&b, " %s", strings.Join(be.Target.Addresses, ", "))
			}
			fmt.Fprintf(&b, "\n\n%s\n", be.Target.Why)
		}
	} else {
		b.WriteString("not served: the rule is not in the routing table\n")
	}
	v.writeFindings(&b, o, "spec.rules["+itoa(i)+"].backendRefs["+itoa(j)+"]")
	return b.String()
}

// servedBackend is backendRef j of rule i of the route as the routing
// table holds it (nil: the rule is not served).
func (v *view) servedBackend(route engine.ObjectKey, i, j int) *engine.Backend {
	rs := v.state.Result.Routes[route]
	if rs == nil {
		return nil
	}
	for _, e := range rs.Entries {
		if e.Rule != i {
			continue
		}
		var bs []*engine.Backend
		switch {
		case e.HTTP != nil:
			bs = e.HTTP.Backends
		case e.SNI != nil:
			bs = e.SNI.Backends
		case e.Stream != nil:
			bs = e.Stream.Backends
		}
		if j < len(bs) {
			return bs[j]
		}
	}
	return nil
}

// hoverListener is the listener's status (attached routes, conditions).
func (v *view) hoverListener(o *placed, i int) string {
	t := o.tree()
	name := str(t, "spec", "listeners", i, "name")
	for _, ls := range list(t, "status", "listeners") {
		if str(ls, "name") == name {
			return fmt.Sprintf("**listener %q** of %s\n\n%s", name, o.key, yamlBlock(ls))
		}
	}
	return ""
}

// hoverRule says where the route's rule i is served and, match by match,
// the rules it loses to (shadowed: never receives a request there) and
// those it shadows.
func (v *view) hoverRule(o *placed, i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**rule %d** of %s\n\n", i, o.key)
	served := 0
	if rs := v.state.Result.Routes[o.key]; rs != nil {
		for _, e := range rs.Entries {
			if e.Rule == i {
				served += len(e.ServedOn)
			}
		}
		for _, d := range rs.Dropped {
			if d.Rule == i {
				fmt.Fprintf(&b, "**not served**: %s\n\n", d.Why)
			}
		}
	}
	fmt.Fprintf(&b, "served on %d virtual host(s) or listener(s)\n", served)
	isRule := func(r *engine.RouteRule) bool {
		return r != nil && r.Route == o.key && r.Index != nil && r.Index.Rule == i
	}
	for _, sh := range v.state.Result.Shadows() {
		switch {
		case isRule(sh.Loser):
			fmt.Fprintf(&b, "\n- match %d never receives a request on %s: %s takes every one first (%s)", sh.Loser.Index.Match, sh.VirtualHost.Name, sh.Winner.Name, sh.Why)
		case isRule(sh.Winner):
			fmt.Fprintf(&b, "\n- match %d shadows %s on %s (%s)", sh.Winner.Index.Match, sh.Loser.Name, sh.VirtualHost.Name, sh.Why)
		}
	}
	v.writeFindings(&b, o, "spec.rules["+itoa(i)+"]")
	return b.String()
}

// annotationAt is the annotation key written at line of o ("" : none).
func (v *view) annotationAt(o *placed, line int) string {
	for path, pos := range o.src.Fields {
		if key, ok := strings.CutPrefix(path, "metadata.annotations["); ok && int(pos.Line) == line {
			return strings.TrimSuffix(key, "]")
		}
	}
	return ""
}

// hoverAnnotation says, for an ingress-nginx annotation of an Ingress,
// whether gwdev emulates it and what gwdev migrate does with it.
func (v *view) hoverAnnotation(o *placed, name string) string {
	short, ok := strings.CutPrefix(name, ingressnginx.AnnotationPrefix)
	if !ok || o.key.Kind != "Ingress" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**\n\n", name)
	find := func(as []ingressnginx.Annotation) *ingressnginx.Annotation {
		for i := range as {
			if as[i].Name == short {
				return &as[i]
			}
		}
		return nil
	}
	switch {
	case find(ingressnginx.AnnotationsEmulated()) != nil:
		a := find(ingressnginx.AnnotationsEmulated())
		fmt.Fprintf(&b, "emulated by gwdev (%s): ingress-nginx %s\n", a.Test, a.Nginx)
	case find(ingressnginx.AnnotationsReported()) != nil:
		fmt.Fprintf(&b, "not emulated: ingress-nginx %s\n", find(ingressnginx.AnnotationsReported()).Nginx)
	default:
		b.WriteString("not an annotation ingress-nginx documents\n")
	}
	if v.state.Result.Table == nil {
		return b.String()
	}
	said := map[string]bool{} // once per reason, not per rule it is dropped from
	for _, d := range ingressnginx.Migrate(v.state.Result, ingressnginx.MigrationOptions{}).Dropped {
		if d.Ingress == o.key && d.What == name && !said[d.Why] {
			said[d.Why] = true
			fmt.Fprintf(&b, "\ngwdev migrate drops it: %s", d.Why)
			if d.Security {
				b.WriteString(" (security-relevant: migrate exits 1)")
			}
			b.WriteString("\n")
		}
	}
	if len(said) == 0 {
		b.WriteString("\ngwdev migrate drops none of it: the HTTPRoutes it writes do what it does\n")
	}
	return b.String()
}
