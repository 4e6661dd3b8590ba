package report

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine"
)

// GitHubLevel maps a severity to a workflow command (error, warning, notice).
func GitHubLevel(severity string) string {
	switch severity {
	case string(engine.SeverityError):
		return "error"
	case string(engine.SeverityWarning):
		return "warning"
	}
	return "notice"
}

// WriteGitHub writes one GitHub Actions workflow command per finding,
// `::error file=F,line=L,col=C,title=T::message`, the hint on a line of its
// own inside the message.
func WriteGitHub(out io.Writer, fs []Finding) {
	for _, m := range fs {
		props := []string{}
		if m.File != "" {
			props = append(props, "file="+escapeProperty(filepath.ToSlash(m.File)))
			if m.Line > 0 {
				props = append(props, "line="+strconv.Itoa(m.Line))
				if m.Column > 0 {
					props = append(props, "col="+strconv.Itoa(m.Column))
				}
			}
		}
		props = append(props, "title="+escapeProperty(m.title()))
		msg := m.Message
		if m.Condition != "" {
			msg = m.Condition + " " + m.Code + ": " + msg
		}
		if m.Hint != "" {
			msg += "\nHint: " + m.Hint
		}
		fmt.Fprintf(out, "::%s %s::%s\n", GitHubLevel(m.Severity), strings.Join(props, ","), escapeData(msg))
	}
}

// GitHubSummary is the plain line after check's annotations: the counts
// of errors, warnings and notes.
func GitHubSummary(fs []Finding) string {
	n := map[string]int{}
	for _, m := range fs {
		n[GitHubLevel(m.Severity)]++
	}
	return fmt.Sprintf("gwdev check: %s, %s, %s", Plural(n["error"], "error"), Plural(n["warning"], "warning"), Plural(n["notice"], "note"))
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
