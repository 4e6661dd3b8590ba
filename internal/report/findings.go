package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

// Codes of the findings that carry no condition reason.
const (
	// CodeLoadError is a manifest the loader refused (not loaded).
	CodeLoadError = "LoadError"
	// CodeLoadWarning is a loader warning (a symlink followed out of the
	// folder, …).
	CodeLoadWarning = "LoadWarning"
	// CodeNote is one of gwdev's own notes without a reason.
	CodeNote = "Note"
)

// Finding is one finding as the machine formats write it (check
// -o json|yaml, --format github|sarif, and diff's github and sarif): the
// engine's findings and the loader's problems and warnings, typed, with the
// explanation the dashboard shows as its hint.
type Finding struct {
	// Severity is error, warning or info.
	Severity string `json:"severity"`
	// Code is the condition reason (NotAllowedByListeners, ShadowedRule,
	// …), or LoadError, LoadWarning or Note for findings without one.
	Code string `json:"code"`
	// Condition is "Type=Status" for a finding from a status condition.
	Condition string `json:"condition,omitempty"`
	// Object is the object the finding is about (nil: a file, not an object).
	Object *engine.ObjectKey `json:"object,omitempty"`
	// Parent is the Gateway or ListenerSet of the route's parentRef.
	Parent *engine.ObjectKey `json:"parent,omitempty"`
	// Scope narrows the finding in words (`listener "https"`, `parentRefs[0]: …`).
	Scope string `json:"scope,omitempty"`
	// Field is the path of the field inside the object.
	Field string `json:"field,omitempty"`
	// File, Line and Column locate it (1-based; 0 is unknown): the field's
	// key or list item when the finding has a field path the loader
	// recorded, else the object's first field.
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
	Message string `json:"message"`
	// Hint says what the finding means and how to fix it ("" : none).
	Hint string `json:"hint,omitempty"`
}

// Findings lists the load problems (errors, first) and the result's
// findings (which hold the loader's warnings too) in the
// order check's summary prints them.
func Findings(lr *watch.LoadResult, res *engine.Result) []Finding {
	out := make([]Finding, 0, len(lr.Problems)+len(res.Findings)) // never nil: -o json writes "findings": []
	for _, p := range lr.Problems {
		m := Finding{Severity: string(engine.SeverityError), Code: CodeLoadError, Field: p.Field,
			File: p.File, Line: p.Line, Column: p.Column, Message: p.Message, Hint: p.Hint()}
		if p.Object != (engine.ObjectKey{}) {
			m.Object = &p.Object
		}
		out = append(out, m)
	}
	for _, f := range res.Findings {
		m := Finding{Severity: string(f.Severity), Code: f.Reason, Condition: f.Condition(), Scope: f.Scope,
			Field: f.Field, File: f.Source.File, Line: f.Source.Line, Column: f.Source.Column, Message: f.Message, Hint: f.Hint()}
		if f.Object != (engine.ObjectKey{}) {
			m.Object = &f.Object
		}
		if f.Parent != (engine.ObjectKey{}) {
			m.Parent = &f.Parent
		}
		if m.Code == "" {
			m.Code = CodeNote
			if m.Object == nil {
				m.Code = CodeLoadWarning
			}
		}
		out = append(out, m)
	}
	return out
}

// subject names what a finding is about: the object, then its scope
// ("" : a file, not an object).
func (m Finding) subject() string {
	if m.Object == nil {
		return strings.TrimSpace(m.Scope)
	}
	return strings.TrimSpace(m.Object.String() + " " + m.Scope)
}

// title is the annotation's title: "gwdev: " and the subject.
func (m Finding) title() string {
	if s := m.subject(); s != "" {
		return "gwdev: " + s
	}
	return "gwdev"
}

// findingsDoc is the last document of check -o yaml: the findings beside
// the objects, in a kind of gwdev's own that no cluster serves.
type findingsDoc struct {
	APIVersion string    `json:"apiVersion"`
	Kind       string    `json:"kind"`
	Findings   []Finding `json:"findings"`
}

// WriteFindingsYAML appends the findings document ("---", then a
// CheckFindings of gwdev.dev/v1alpha1) to check -o yaml's stream.
func WriteFindingsYAML(w io.Writer, fs []Finding) error {
	if fs == nil {
		fs = []Finding{}
	}
	b, err := YAML(findingsDoc{APIVersion: "gwdev.dev/v1alpha1", Kind: "CheckFindings", Findings: fs})
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, "---\n"); err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// WriteLoadProblems writes the loader's problems and warnings to w, one
// per line ("error: …", "warning: …"): what check -o yaml|json, graph and
// migrate say on stderr beside their output.
func WriteLoadProblems(w io.Writer, lr *watch.LoadResult) {
	for _, p := range lr.Problems {
		fmt.Fprintln(w, "error:", p.String())
	}
	for _, wr := range lr.Warnings {
		fmt.Fprintln(w, "warning:", wr.String())
	}
}
