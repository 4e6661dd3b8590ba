package tui

import (
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/internal/report"
)

// objectYAML renders an object with its status, Secrets redacted, with the
// one YAML renderer (internal/report).
func objectYAML(o objectEntry) string {
	y, err := report.ObjectYAML(o.obj, o.apiVersion, o.key.Kind)
	if err != nil {
		return "# cannot render: " + err.Error()
	}
	return y
}

// statusLines returns the status block of an object's YAML without
// lastTransitionTime lines, which change on every reload.
func statusLines(y string) []string {
	lines := strings.Split(y, "\n")
	start := -1
	for i, l := range lines {
		if l == "status:" || strings.HasPrefix(l, "status: ") {
			start = i
			break
		}
	}
	if start < 0 {
		return nil
	}
	var out []string
	for _, l := range lines[start:] {
		if i := len(l) - len(strings.TrimLeft(l, " ")); i == 0 && l != "" && !strings.HasPrefix(l, "status") {
			break // the next top-level key
		}
		if strings.Contains(l, "lastTransitionTime:") {
			continue
		}
		out = append(out, l)
	}
	return out
}

// highlightYAML styles YAML line by line: keys, strings, numbers,
// booleans, and the status of each condition by the engine's polarity rule
// (report.ConditionBadge: Conflicted "True" is a problem, Accepted "True"
// is not).
func (st *styles) highlightYAML(y string) []string {
	lines := strings.Split(y, "\n")
	types := conditionTypes(lines)
	for i, l := range lines {
		lines[i] = st.yamlLine(l, types[i])
	}
	return lines
}

// yamlKeyLine splits a line of block YAML into the column of its key, the
// key and the value; item is true when the line starts a list item ("- ").
func yamlKeyLine(l string) (col int, item bool, k, v string, ok bool) {
	rest := strings.TrimLeft(l, " ")
	col = len(l) - len(rest)
	for strings.HasPrefix(rest, "- ") {
		rest, col, item = rest[2:], col+2, true
	}
	k, v, ok = cutYAMLKey(rest)
	return col, item, k, v, ok
}

// conditionTypes maps the index of each condition's status line (`status:
// "True"`, "False" or "Unknown") to the condition's type: the `type:` key
// of the same mapping, which follows it (keys are sorted).
func conditionTypes(lines []string) map[int]string {
	types := map[int]string{}
	for i, l := range lines {
		col, _, k, v, ok := yamlKeyLine(l)
		if !ok || k != "status" || (v != `"True"` && v != `"False"` && v != `"Unknown"`) {
			continue
		}
		for _, n := range lines[i+1:] {
			c, item, nk, nv, ok := yamlKeyLine(n)
			if c < col || (c == col && item) {
				break // the mapping ended
			}
			if ok && c == col && nk == "type" {
				types[i] = nv
				break
			}
		}
	}
	return types
}

// yamlLine styles one line; condType is the type of the condition whose
// status the line holds ("" : not a condition's status).
func (st *styles) yamlLine(l, condType string) string {
	rest := strings.TrimLeft(l, " ")
	indent := l[:len(l)-len(rest)]
	var b strings.Builder
	b.WriteString(indent)
	for strings.HasPrefix(rest, "- ") || rest == "-" {
		b.WriteString(st.Comment.Render("-"))
		if rest == "-" {
			return b.String()
		}
		b.WriteByte(' ')
		rest = rest[2:]
	}
	if strings.HasPrefix(rest, "#") {
		b.WriteString(st.Comment.Render(rest))
		return b.String()
	}
	if k, v, ok := cutYAMLKey(rest); ok {
		b.WriteString(st.Key.Render(k))
		b.WriteByte(':')
		if v != "" {
			b.WriteByte(' ')
			if condType != "" {
				b.WriteString(st.conditionStatus(condType, v))
			} else {
				b.WriteString(st.yamlValue(v))
			}
		}
		return b.String()
	}
	b.WriteString(st.yamlValue(rest))
	return b.String()
}

// conditionStatus styles a condition's quoted status by what it says
// (report.ConditionBadge): all is well, a failed condition, a raised
// negative one; Unknown is a warning either way.
func (st *styles) conditionStatus(condType, quoted string) string {
	status := metav1.ConditionStatus(strings.Trim(quoted, `"`))
	if status == metav1.ConditionUnknown {
		return st.Warning.Render(quoted)
	}
	switch report.ConditionBadge(metav1.Condition{Type: condType, Status: status}) {
	case report.BadgeFailed:
		return st.False.Render(quoted)
	case report.BadgeRaised:
		return st.Warning.Render(quoted)
	}
	return st.True.Render(quoted)
}

// cutYAMLKey splits "key: value" (or "key:") when the line starts with a
// plain key.
func cutYAMLKey(s string) (string, string, bool) {
	if s == "" || s[0] == '"' || s[0] == '\'' || s[0] == '{' || s[0] == '[' {
		return "", "", false
	}
	if strings.HasSuffix(s, ":") && !strings.Contains(s, ": ") {
		return s[:len(s)-1], "", true
	}
	k, v, ok := strings.Cut(s, ": ")
	if !ok || strings.ContainsAny(k, " \t") {
		return "", "", false
	}
	return k, v, true
}

func (st *styles) yamlValue(v string) string {
	switch v {
	case `"True"`:
		return st.True.Render(v)
	case `"False"`:
		return st.False.Render(v)
	case `"Unknown"`:
		return st.Warning.Render(v)
	case "true", "false":
		return st.Bool.Render(v)
	case "null", "{}", "[]":
		return st.Comment.Render(v)
	case "|", "|-", ">", ">-":
		return st.Comment.Render(v)
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return st.Number.Render(v)
	}
	return st.String.Render(v)
}

// diffLines is a line diff of a against b: unchanged lines start with two
// spaces, removed ones with "- ", added ones with "+ ".
func diffLines(a, b []string) []string {
	const limit = 4000
	if len(a) > limit || len(b) > limit {
		return []string{"  (status too large to diff)"}
	}
	// LCS table, from the end.
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out = append(out, "  "+a[i])
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "- "+a[i])
			i++
		default:
			out = append(out, "+ "+b[j])
			j++
		}
	}
	return out
}

// hunks keeps the changed lines of a diff with ctx lines of context
// around them, separating distant hunks with "…". It returns nil when
// nothing changed.
func hunks(diff []string, ctx int) []string {
	keep := make([]bool, len(diff))
	changed := false
	for i, l := range diff {
		if strings.HasPrefix(l, "  ") {
			continue
		}
		changed = true
		for k := max(0, i-ctx); k <= min(len(diff)-1, i+ctx); k++ {
			keep[k] = true
		}
	}
	if !changed {
		return nil
	}
	var out []string
	gap := false
	for i, l := range diff {
		if !keep[i] {
			gap = true
			continue
		}
		if gap && len(out) > 0 {
			out = append(out, "…")
		}
		gap = false
		out = append(out, l)
	}
	return out
}
