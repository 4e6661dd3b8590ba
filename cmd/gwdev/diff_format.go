package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// printDiffText writes the diff for people: regressions, fixes, other
// changes, then a count.
func printDiffText(out io.Writer, rep diffReport) {
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
	section := func(title, mark string, keep func(diffItem) bool) {
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
	section("Worse", "✗", func(d diffItem) bool { return d.Worse })
	section("Better", "✓", func(d diffItem) bool { return d.Better })
	section("Other changes", "~", func(d diffItem) bool { return !d.Worse && !d.Better })
	fmt.Fprintf(out, "\n%d worse, %d better, %d other.\n", rep.Worse, rep.Better, len(rep.Changes)-rep.Worse-rep.Better)
}

// printDiffJSON writes the report as indented JSON.
func printDiffJSON(out io.Writer, rep diffReport) error {
	if rep.Changes == nil {
		rep.Changes = []diffItem{}
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}

// printDiffGitHub writes one GitHub Actions workflow command per change
// (`::error file=F,line=L,title=T::message`; regressions are errors or
// warnings, the rest notices), then a plain summary line.
func printDiffGitHub(out io.Writer, rep diffReport) {
	for _, d := range rep.Changes {
		props := []string{}
		if d.File != "" {
			props = append(props, "file="+escapeProperty(d.File))
			if d.Line > 0 {
				props = append(props, "line="+strconv.Itoa(d.Line))
			}
		}
		title := "gwdev: " + d.Object.String()
		if d.Scope != "" {
			title += " " + d.Scope
		}
		props = append(props, "title="+escapeProperty(title))
		fmt.Fprintf(out, "::%s %s::%s\n", d.Level, strings.Join(props, ","), escapeData(d.Message))
	}
	fmt.Fprintf(out, "gwdev diff: %d worse, %d better, %d other (base %s)\n", rep.Worse, rep.Better,
		len(rep.Changes)-rep.Worse-rep.Better, rep.Base)
}

// escapeData escapes a workflow command's message: %, CR and LF.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// escapeProperty escapes a workflow command property value: as data, plus
// the ":" and "," that delimit properties.
func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
