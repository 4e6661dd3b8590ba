package app

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/watch"
)

// statusView is what `gwdev diff` compares of one side: every object's
// conditions by scope, gwdev's own findings, load problems, and where each
// route receives traffic.
type statusView struct {
	objects  map[engine.ObjectKey]*objectView
	findings map[string]engine.Finding
	problems map[string]watch.Problem
	// warnings are the loader's warnings (symlinks out of the folder), by
	// file: their messages name absolute paths that differ between trees.
	warnings map[string]watch.Warning
	// traffic maps a route to the listener/hosts where at least one of its
	// matches is served and not shadowed.
	traffic map[engine.ObjectKey]map[string]bool
}

// objectView is one object's source and conditions, keyed by scope and type.
type objectView struct {
	source engine.Source
	conds  map[string]condView
}

type condView struct {
	scope, typ, status, reason, message string
}

func (c condView) problem() bool { return engine.ConditionIsProblem(c.typ, c.status) }

func (c condView) String() string {
	if c.typ == "" {
		return "absent"
	}
	return c.status + " (" + c.reason + ")"
}

// newStatusView reads one side. paths maps a loader path, alone or in a
// message, to the path shown to people (the base side is loaded from a
// temporary copy).
func newStatusView(lr *watch.LoadResult, res *engine.Result, paths pathMapper) *statusView {
	file := paths.file
	v := &statusView{objects: map[engine.ObjectKey]*objectView{}, findings: map[string]engine.Finding{},
		problems: map[string]watch.Problem{}, warnings: map[string]watch.Warning{}, traffic: map[engine.ObjectKey]map[string]bool{}}
	res.Objects.Each(func(k engine.ObjectKey, o metav1.Object) {
		src := res.Objects.SourceOf(k).At("")
		src.File = file(src.File)
		v.objects[k] = &objectView{source: src, conds: objectConditions(o, k.Namespace)}
	})
	for _, f := range res.Findings {
		if f.Type != "" || f.Severity == engine.SeverityInfo {
			continue // conditions are compared as conditions; notes only inform
		}
		f.Source.File = file(f.Source.File)
		f.Message = paths.text(f.Message)
		v.findings[string(f.Severity)+"|"+f.Object.String()+"|"+f.Scope+"|"+f.Reason+"|"+f.Message] = f
	}
	for _, p := range lr.Problems {
		p.File = file(p.File)
		p.Message = paths.text(p.Message)
		v.problems[p.File+"|"+p.Message] = p
	}
	for _, w := range lr.Warnings {
		w.File = file(w.File)
		w.Message = paths.text(w.Message)
		v.warnings[w.File] = w
	}
	shadowed := map[*engine.RouteRule]bool{}
	for _, s := range res.Shadows() {
		shadowed[s.Loser] = true
	}
	engine.EachListener(res.Table, func(l *engine.ListenerTable) {
		place := func(route engine.ObjectKey, host string) {
			if v.traffic[route] == nil {
				v.traffic[route] = map[string]bool{}
			}
			v.traffic[route][fmt.Sprintf("%s %s/%s listener %q host %q", l.Owner.Kind, l.Owner.Namespace, l.Owner.Name, l.SectionName, anyHost(host))] = true
		}
		for _, vh := range l.VirtualHosts {
			for _, r := range vh.Rules {
				if !shadowed[r] {
					place(r.Route, vh.Hostname)
				}
			}
		}
		seen := map[string]bool{}
		for _, r := range l.TLSRoutes {
			for _, h := range r.Hostnames {
				if !seen[h] { // a later entry for a hostname never gets the connection
					seen[h] = true
					place(r.Route, h)
				}
			}
		}
		if len(l.StreamRoutes) > 0 { // the first one serves every connection
			place(l.StreamRoutes[0].Route, "")
		}
	})
	return v
}

func anyHost(h string) string {
	if h == "" {
		return "*"
	}
	return h
}

// unionKeys returns the keys of both maps.
func unionKeys[K comparable, V any](a, b map[K]V) map[K]bool {
	out := make(map[K]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// objectConditions flattens an object's status conditions, whatever its
// kind: status.conditions, status.listeners[].conditions,
// status.parents[].conditions and status.ancestors[].conditions.
// References without a namespace are in ns, the object's namespace.
func objectConditions(o metav1.Object, ns string) map[string]condView {
	out := map[string]condView{}
	b, err := json.Marshal(o)
	if err != nil {
		return out
	}
	var doc struct {
		Status struct {
			Conditions []metav1.Condition `json:"conditions"`
			Listeners  []struct {
				Name       string             `json:"name"`
				Conditions []metav1.Condition `json:"conditions"`
			} `json:"listeners"`
			Parents []struct {
				ParentRef  map[string]any     `json:"parentRef"`
				Conditions []metav1.Condition `json:"conditions"`
			} `json:"parents"`
			Ancestors []struct {
				AncestorRef map[string]any     `json:"ancestorRef"`
				Conditions  []metav1.Condition `json:"conditions"`
			} `json:"ancestors"`
		} `json:"status"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return out
	}
	add := func(scope string, cs []metav1.Condition) {
		for _, c := range cs {
			out[scope+"|"+c.Type] = condView{scope: scope, typ: c.Type, status: string(c.Status), reason: c.Reason, message: c.Message}
		}
	}
	add("", doc.Status.Conditions)
	for _, l := range doc.Status.Listeners {
		add(fmt.Sprintf("listener %q", l.Name), l.Conditions)
	}
	for _, p := range doc.Status.Parents {
		add("parent "+RefString(p.ParentRef, ns), p.Conditions)
	}
	for _, a := range doc.Status.Ancestors {
		add("ancestor "+RefString(a.AncestorRef, ns), a.Conditions)
	}
	return out
}

// RefString renders a parentRef or ancestorRef: "Gateway ns/name/section:port"
// (ns when the reference has no namespace).
func RefString(ref map[string]any, ns string) string {
	str := func(k string) string {
		if s, ok := ref[k].(string); ok {
			return s
		}
		return ""
	}
	kind := str("kind")
	if kind == "" {
		kind = "Gateway"
	}
	if n := str("namespace"); n != "" {
		ns = n
	}
	s := kind + " " + str("name")
	if ns != "" {
		s = kind + " " + ns + "/" + str("name")
	}
	if sec := str("sectionName"); sec != "" {
		s += "/" + sec
	}
	if p, ok := ref["port"].(float64); ok {
		s += fmt.Sprintf(":%d", int(p))
	}
	return s
}

// Severities of diff items, as GitHub annotation levels.
const (
	diffError   = "error"
	diffWarning = "warning"
	diffNotice  = "notice"
)

// compareViews lists the differences from base to head: regressions first,
// then fixes, then neutral changes, each by file and line.
func compareViews(base, head *statusView) []report.DiffItem {
	var items []report.DiffItem
	for k := range unionKeys(base.objects, head.objects) {
		b, h := base.objects[k], head.objects[k]
		switch {
		case h == nil:
			items = append(items, report.DiffItem{Change: "removed", Level: diffNotice, Object: k, File: b.source.File, Line: b.source.Line,
				Message: k.String() + " removed"})
			continue
		case b == nil:
			items = append(items, report.DiffItem{Change: "added", Level: diffNotice, Object: k, File: h.source.File, Line: h.source.Line,
				Message: k.String() + " added"})
			b = &objectView{}
		}
		items = append(items, compareConditions(k, b, h)...)
	}
	items = append(items, compareFindings(base, head)...)
	items = append(items, compareProblems(base, head)...)
	items = append(items, compareTraffic(base, head)...)
	sort.SliceStable(items, func(i, j int) bool {
		a, b := items[i], items[j]
		if ra, rb := itemRank(a), itemRank(b); ra != rb {
			return ra < rb
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		if a.Object != b.Object {
			return a.Object.String() < b.Object.String()
		}
		return a.Message < b.Message
	})
	return items
}

func itemRank(d report.DiffItem) int {
	switch {
	case d.Worse:
		return 0
	case d.Better:
		return 1
	}
	return 2
}

// compareConditions reports conditions whose status or reason changed, and
// problem conditions that appeared or went away with their scope.
func compareConditions(k engine.ObjectKey, b, h *objectView) []report.DiffItem {
	var items []report.DiffItem
	for s := range unionKeys(b.conds, h.conds) {
		bc, hc := b.conds[s], h.conds[s]
		if bc.status == hc.status && bc.reason == hc.reason {
			continue
		}
		bp := bc.typ != "" && bc.problem()
		hp := hc.typ != "" && hc.problem()
		if hc.typ == "" && !bp {
			continue // a healthy condition went away with its scope (a removed listener or parentRef)
		}
		if bc.typ == "" && !hp {
			continue // a new, healthy scope: nothing to say beyond the object's own change
		}
		c := hc
		if c.typ == "" {
			c = bc
		}
		d := report.DiffItem{Change: "condition", Level: diffNotice, Object: k, File: h.source.File, Line: h.source.Line,
			Scope: c.scope, Before: bc.String(), After: hc.String()}
		if h.source.File == "" {
			d.File, d.Line = b.source.File, b.source.Line
		}
		switch {
		case hp && !bp:
			d.Worse, d.Level = true, diffError
		case bp && !hp:
			d.Better = true
		}
		switch {
		case bc.typ == "":
			d.Message = fmt.Sprintf("%s is %s (new status entry)", c.typ, d.After)
		case hc.typ == "":
			d.Message = fmt.Sprintf("%s was %s; the status entry is gone", c.typ, d.Before)
		default:
			d.Message = fmt.Sprintf("%s: %s → %s", c.typ, d.Before, d.After)
		}
		if hc.typ != "" && hc.message != "" && hp {
			d.Message += ": " + hc.message
		}
		items = append(items, d)
	}
	return items
}

// compareFindings reports gwdev's own warnings and errors (shadowed rules,
// routes without parents, …) that appeared or went away.
func compareFindings(base, head *statusView) []report.DiffItem {
	var items []report.DiffItem
	for key, f := range head.findings {
		if _, ok := base.findings[key]; !ok {
			items = append(items, report.DiffItem{Change: "finding", Worse: true, Level: string(f.Severity), Object: f.Object,
				File: f.Source.File, Line: f.Source.Line, Scope: f.Scope, After: string(f.Severity), Message: "new " + string(f.Severity) + ": " + f.Message})
		}
	}
	for key, f := range base.findings {
		if _, ok := head.findings[key]; !ok {
			d := report.DiffItem{Change: "finding", Better: true, Level: diffNotice, Object: f.Object, Scope: f.Scope,
				Before: string(f.Severity), Message: "resolved " + string(f.Severity) + ": " + f.Message}
			if o := head.objects[f.Object]; o != nil {
				d.File, d.Line = o.source.File, o.source.Line
			}
			items = append(items, d)
		}
	}
	return items
}

// compareProblems reports manifests that stopped or started loading, and
// fields the cluster's CRDs (--crds) lack, which it drops from an object
// that loads all the same (Problem.Pruned).
func compareProblems(base, head *statusView) []report.DiffItem {
	var items []report.DiffItem
	for key, p := range head.problems {
		if _, ok := base.problems[key]; !ok {
			what := "does not load: "
			if p.Pruned {
				what = "loaded without the field: "
			}
			items = append(items, report.DiffItem{Change: "load", Worse: true, Level: diffError, Object: p.Object, File: p.File, Line: p.Line,
				Message: what + p.Message})
		}
	}
	for key, p := range base.problems {
		if _, ok := head.problems[key]; !ok {
			what := "loads again: "
			if p.Pruned {
				what = "no longer dropped: "
			}
			items = append(items, report.DiffItem{Change: "load", Better: true, Level: diffNotice, Object: p.Object, File: p.File,
				Message: what + p.Message})
		}
	}
	for key, w := range head.warnings {
		if _, ok := base.warnings[key]; !ok {
			items = append(items, report.DiffItem{Change: "load", Worse: true, Level: diffWarning, File: w.File, Message: "new warning: " + w.Message})
		}
	}
	return items
}

// compareTraffic reports routes, present on both sides, that stopped or
// started receiving traffic on a listener and host.
func compareTraffic(base, head *statusView) []report.DiffItem {
	var items []report.DiffItem
	for k := range unionKeys(base.traffic, head.traffic) {
		b, h := base.objects[k], head.objects[k]
		if b == nil || h == nil {
			continue // added or removed: said once already
		}
		var lost, gained []string
		for p := range base.traffic[k] {
			if !head.traffic[k][p] {
				lost = append(lost, p)
			}
		}
		for p := range head.traffic[k] {
			if !base.traffic[k][p] {
				gained = append(gained, p)
			}
		}
		sort.Strings(lost)
		sort.Strings(gained)
		if len(lost) > 0 {
			items = append(items, report.DiffItem{Change: "traffic", Worse: true, Level: diffError, Object: k, File: h.source.File, Line: h.source.Line,
				Message: k.String() + " no longer receives traffic on " + strings.Join(lost, "; ")})
		}
		if len(gained) > 0 {
			items = append(items, report.DiffItem{Change: "traffic", Better: true, Level: diffNotice, Object: k, File: h.source.File, Line: h.source.Line,
				Message: k.String() + " now receives traffic on " + strings.Join(gained, "; ")})
		}
	}
	return items
}
