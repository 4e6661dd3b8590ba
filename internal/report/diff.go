package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine"
)

// DiffReport is what `gwdev diff` found, and its JSON form.
type DiffReport struct {
	// Base is the commit compared against; BaseRef how it was chosen.
	Base    string     `json:"base"`
	BaseRef string     `json:"baseRef"`
	Dir     string     `json:"dir"`
	Worse   int        `json:"worse"`
	Better  int        `json:"better"`
	Changes []DiffItem `json:"changes"`
}

// DiffItem is one difference between the base and the working tree.
type DiffItem struct {
	// Change is added, removed, condition, finding, traffic or load.
	Change string `json:"change"`
	// Worse is set when the change is a regression (exit status 1); Better
	// when it fixes something; neither for neutral changes.
	Worse  bool `json:"worse,omitempty"`
	Better bool `json:"better,omitempty"`
	// Level is error, warning or notice.
	Level  string           `json:"level"`
	Object engine.ObjectKey `json:"object,omitzero"`
	// File and Line locate the change in the working tree (for removed
	// objects, in the base).
	File    string `json:"file,omitempty"`
	Line    int    `json:"line,omitempty"`
	Scope   string `json:"scope,omitempty"`
	Before  string `json:"before,omitempty"`
	After   string `json:"after,omitempty"`
	Message string `json:"message"`
}

// WriteDiff writes diff's report in format (text, github, sarif or json;
// version is the gwdev version SARIF names).
func WriteDiff(out io.Writer, format string, rep DiffReport, version string) error {
	switch format {
	case "json":
		return writeDiffJSON(out, rep)
	case "github":
		writeDiffGitHub(out, rep)
	case "sarif":
		return WriteSARIF(out, diffFindings(rep), version)
	default:
		writeDiffText(out, rep)
	}
	return nil
}

// writeDiffText writes the diff for people: regressions, fixes, other
// changes, then a count.
func writeDiffText(out io.Writer, rep DiffReport) {
	short := rep.Base
	if len(short) > 12 {
		short = short[:12]
	}
	ref := ""
	if rep.BaseRef != "" {
		ref = " (" + rep.BaseRef + ")"
	}
	fmt.Fprintf(out, "gwdev diff %s: %s%s → working tree\n", rep.Dir, short, ref)
	if len(rep.Changes) == 0 {
		fmt.Fprintln(out, "\nNo status changes.")
		return
	}
	section := func(title, mark string, keep func(DiffItem) bool) {
		first := true
		for _, d := range rep.Changes {
			if !keep(d) {
				continue
			}
			if first {
				fmt.Fprintf(out, "\n%s:\n", title)
				first = false
			}
			where := d.File
			if where != "" && d.Line > 0 {
				where += ":" + strconv.Itoa(d.Line)
			}
			switch d.Change {
			case "added", "removed":
				m := map[string]string{"added": "+", "removed": "-"}[d.Change]
				fmt.Fprintln(out, strings.TrimRight("  "+m+" "+d.Object.String()+"  "+where, " "))
				continue
			}
			head := "  " + mark + " " + where + "  " + d.Object.String()
			if d.Scope != "" {
				head += "  " + d.Scope
			}
			fmt.Fprintln(out, head)
			fmt.Fprintf(out, "      %s\n", d.Message)
		}
	}
	section("Worse", "✗", func(d DiffItem) bool { return d.Worse })
	section("Better", "✓", func(d DiffItem) bool { return d.Better })
	section("Other changes", "~", func(d DiffItem) bool { return !d.Worse && !d.Better })
	fmt.Fprintf(out, "\n%d worse, %d better, %d other.\n", rep.Worse, rep.Better, len(rep.Changes)-rep.Worse-rep.Better)
}

// writeDiffJSON writes the report as indented JSON.
func writeDiffJSON(out io.Writer, rep DiffReport) error {
	if rep.Changes == nil {
		rep.Changes = []DiffItem{}
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}

// writeDiffGitHub writes one GitHub Actions workflow command per change
// (`::error file=F,line=L,title=T::message`; regressions are errors or
// warnings, the rest notices), then a plain summary line.
func writeDiffGitHub(out io.Writer, rep DiffReport) {
	WriteGitHub(out, diffFindings(rep))
	fmt.Fprintf(out, "gwdev diff: %d worse, %d better, %d other (base %s)\n", rep.Worse, rep.Better,
		len(rep.Changes)-rep.Worse-rep.Better, rep.Base)
}

// diffCodes explain the codes of diff's SARIF rules: the kind of change,
// and whether it is a regression or a fix.
var diffCodes = map[string]string{
	"added":            "An object was added in the working tree.",
	"removed":          "An object was removed from the working tree.",
	"condition-worse":  "A status condition turned into a problem since the base revision (for example Accepted or ResolvedRefs became False). Fix it as the message says, or run gwdev check for the details.",
	"condition-better": "A status condition that was a problem at the base revision is fixed.",
	"condition":        "A status condition changed without getting better or worse.",
	"finding-worse":    "gwdev reports a new error or warning (for example a shadowed rule) that the base revision did not have.",
	"finding-better":   "An error or warning of the base revision went away.",
	"finding":          "One of gwdev's findings changed.",
	"load-worse":       "A file that loaded at the base revision no longer loads (schema or YAML error). Fix it as the message says.",
	"load-better":      "A file that did not load at the base revision loads now.",
	"load":             "Something about loading the files changed.",
	"traffic-worse":    "A route lost traffic on a listener: requests it served at the base revision now go elsewhere or nowhere.",
	"traffic-better":   "A route gained traffic on a listener.",
	"traffic":          "What a route serves changed.",
}

// diffFindings turns diff's changes into the findings the github and sarif
// writers take: the code is the kind of change and its direction.
func diffFindings(rep DiffReport) []Finding {
	fs := make([]Finding, 0, len(rep.Changes))
	for _, d := range rep.Changes {
		code := d.Change
		switch {
		case d.Worse && code != "added" && code != "removed":
			code += "-worse"
		case d.Better && code != "added" && code != "removed":
			code += "-better"
		}
		sev := string(engine.SeverityInfo)
		switch d.Level {
		case "error", "warning":
			sev = d.Level
		}
		m := Finding{Severity: sev, Code: code, Scope: d.Scope, File: d.File, Line: d.Line, Message: d.Message, Hint: diffCodes[code]}
		if d.Object != (engine.ObjectKey{}) {
			k := d.Object
			m.Object = &k
		}
		fs = append(fs, m)
	}
	return fs
}
