package main

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// `check -o yaml` prints each object as sigs.k8s.io/yaml.Marshal does:
// encoding/json, then go.yaml.in/yaml/v2 parsing the JSON into maps and
// emitting them again, keys sorted. The round trip was two thirds of the
// time of `check -o yaml` for 10,000 routes. yamlEmitter writes the same
// bytes straight from the JSON: it follows yaml.v2's emitter (libyaml's)
// for block mappings and sequences, its choice of scalar style and its
// line folding at 80 columns, for the text Kubernetes objects hold (ASCII
// scalars, keys of up to 128 bytes, multi-line strings that can be literal
// blocks). Anything else returns errOutsideSubset and the caller falls back
// to sigs.k8s.io/yaml for that object. TestYAMLEmitterMatchesSigsYAML
// checks the two agree.

// errOutsideSubset means the object needs the reference encoder.
var errOutsideSubset = errors.New("outside the fast YAML subset")

// yamlBestWidth is yaml.v2's line width: plain and quoted scalars are
// folded at a space once the column passes it.
const yamlBestWidth = 80

// maxSimpleKey is the longest key yaml.v2 writes as "key: value".
const maxSimpleKey = 128

// yamlEmitter holds the emitter state that decides spacing: the column,
// whether the last character written was whitespace, and whether only
// indentation has been written on the line.
type yamlEmitter struct {
	out        []byte
	col        int
	whitespace bool
	indention  bool
}

// document appends the YAML of the JSON value v (parsed by jsonTree).
func (e *yamlEmitter) document(t *jsonTree, v int32) error {
	e.col, e.whitespace, e.indention = 0, true, true
	if err := e.node(t, v, -1, false); err != nil {
		return err
	}
	e.writeIndent(-1)
	return nil
}

func (e *yamlEmitter) put(c byte) {
	e.out = append(e.out, c)
	e.col++
}

func (e *yamlEmitter) putBreak() {
	e.out = append(e.out, '\n')
	e.col = 0
}

func (e *yamlEmitter) writeIndent(indent int) {
	indent = max(indent, 0)
	if !e.indention || e.col > indent || (e.col == indent && !e.whitespace) {
		e.putBreak()
	}
	for e.col < indent {
		e.put(' ')
	}
	e.whitespace, e.indention = true, true
}

func (e *yamlEmitter) indicator(s string, needWhitespace, isWhitespace, isIndention bool) {
	if needWhitespace && !e.whitespace {
		e.put(' ')
	}
	e.out = append(e.out, s...)
	e.col += len(s)
	e.whitespace = isWhitespace
	e.indention = e.indention && isIndention
}

// node writes value v whose parent collection is indented by indent;
// inMapping is true for a mapping's value.
func (e *yamlEmitter) node(t *jsonTree, v int32, indent int, inMapping bool) error {
	n := &t.nodes[v]
	switch n.kind {
	case jsonObject:
		if n.len == 0 {
			e.indicator("{", true, true, false)
			e.indicator("}", false, false, false)
			return nil
		}
		return e.mapping(t, n, indent)
	case jsonArray:
		if n.len == 0 {
			e.indicator("[", true, true, false)
			e.indicator("]", false, false, false)
			return nil
		}
		return e.sequence(t, n, indent, inMapping)
	case jsonString:
		return e.str(n.s, scalarIndent(indent), false)
	default: // numbers, booleans and null are plain
		e.plain(n.s, scalarIndent(indent), true)
		return nil
	}
}

// scalarIndent is the indentation of a scalar's continuation lines.
func scalarIndent(indent int) int {
	if indent < 0 {
		return 2
	}
	return indent + 2
}

func (e *yamlEmitter) mapping(t *jsonTree, n *jsonNode, indent int) error {
	if indent < 0 {
		indent = 0
	} else {
		indent += 2
	}
	keys := t.kids[n.start : n.start+n.len]
	slices.SortFunc(keys, func(a, b int32) int {
		switch ka, kb := t.nodes[a].s, t.nodes[b].s; {
		case yamlKeyLess(ka, kb):
			return -1
		case yamlKeyLess(kb, ka):
			return 1
		}
		return 0
	})
	for _, k := range keys {
		key := &t.nodes[k]
		if len(key.s) > maxSimpleKey {
			return errOutsideSubset
		}
		e.writeIndent(indent)
		if err := e.str(key.s, indent+2, true); err != nil {
			return err
		}
		e.indicator(":", false, false, false)
		if err := e.node(t, key.value, indent, true); err != nil {
			return err
		}
	}
	return nil
}

func (e *yamlEmitter) sequence(t *jsonTree, n *jsonNode, indent int, inMapping bool) error {
	switch {
	case indent < 0:
		indent = 0
	case !(inMapping && !e.indention):
		indent += 2
	}
	for _, item := range t.kids[n.start : n.start+n.len] {
		e.writeIndent(indent)
		e.indicator("-", true, false, true)
		if err := e.node(t, item, indent, false); err != nil {
			return err
		}
	}
	return nil
}

// str writes a string scalar in the style yaml.v2 picks for it.
func (e *yamlEmitter) str(s string, indent int, key bool) error {
	a, ok := analyzeScalar(s)
	if !ok {
		return errOutsideSubset
	}
	switch {
	case a.multiline:
		if key || !a.blockAllowed {
			return errOutsideSubset
		}
		e.literal(s, indent)
	case plainResolvesToString(s) && !isBase60Float(s):
		switch {
		case a.plainAllowed:
			e.plain(s, indent, !key)
		default:
			e.singleQuoted(s, indent, !key)
		}
	default:
		e.doubleQuoted(s, indent, !key)
	}
	return nil
}

// scalarAnalysis is what yaml.v2's analysis of a scalar decides, for an
// ASCII scalar in block context.
type scalarAnalysis struct {
	multiline    bool
	plainAllowed bool
	blockAllowed bool
}

// analyzeScalar follows yaml_emitter_analyze_scalar. ok is false for text
// outside the subset: non-ASCII or control characters other than '\n'.
func analyzeScalar(s string) (a scalarAnalysis, ok bool) {
	if s == "" {
		return scalarAnalysis{plainAllowed: true}, true
	}
	indicators := strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...")
	var (
		leadingSpace, trailingSpace, leadingBreak, trailingBreak bool
		spaceBreak, previousSpace, previousBreak, breaks         bool
	)
	precededByWhitespace := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x7f || (c < 0x20 && c != '\n') {
			return a, false
		}
		followedByWhitespace := i+1 >= len(s) || s[i+1] == ' '
		if i == 0 {
			switch c {
			case '#', ',', '[', ']', '{', '}', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
				indicators = true
			case '?', ':', '-':
				indicators = indicators || followedByWhitespace
			}
		} else if (c == ':' && followedByWhitespace) || (c == '#' && precededByWhitespace) {
			indicators = true
		}
		switch c {
		case ' ':
			leadingSpace = leadingSpace || i == 0
			trailingSpace = trailingSpace || i == len(s)-1
			previousSpace, previousBreak = true, false
		case '\n':
			breaks = true
			leadingBreak = leadingBreak || i == 0
			trailingBreak = trailingBreak || i == len(s)-1
			spaceBreak = spaceBreak || previousSpace
			previousSpace, previousBreak = false, true
		default:
			previousSpace, previousBreak = false, false
		}
		precededByWhitespace = c == ' ' || c == '\n'
	}
	_ = previousBreak
	a.multiline = breaks
	a.plainAllowed = !(leadingSpace || leadingBreak || trailingSpace || trailingBreak || breaks || spaceBreak || indicators)
	a.blockAllowed = !(trailingSpace || spaceBreak)
	return a, true
}

// plain writes s unquoted; folding is allowed except in keys.
func (e *yamlEmitter) plain(s string, indent int, allowBreaks bool) {
	if !e.whitespace {
		e.put(' ')
	}
	spaces := false
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			if allowBreaks && !spaces && e.col > yamlBestWidth && !(i+1 < len(s) && s[i+1] == ' ') {
				e.writeIndent(indent)
			} else {
				e.put(' ')
			}
			spaces = true
			continue
		}
		e.put(s[i])
		e.indention, spaces = false, false
	}
	e.whitespace, e.indention = false, false
}

func (e *yamlEmitter) singleQuoted(s string, indent int, allowBreaks bool) {
	e.indicator("'", true, false, false)
	spaces := false
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			if allowBreaks && !spaces && e.col > yamlBestWidth && i > 0 && i < len(s)-1 && s[i+1] != ' ' {
				e.writeIndent(indent)
			} else {
				e.put(' ')
			}
			spaces = true
			continue
		}
		if s[i] == '\'' {
			e.put('\'')
		}
		e.put(s[i])
		e.indention, spaces = false, false
	}
	e.indicator("'", false, false, false)
	e.whitespace, e.indention = false, false
}

func (e *yamlEmitter) doubleQuoted(s string, indent int, allowBreaks bool) {
	e.indicator(`"`, true, false, false)
	spaces := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			e.put('\\')
			e.put(c)
			spaces = false
		case c == ' ':
			if allowBreaks && !spaces && e.col > yamlBestWidth && i > 0 && i < len(s)-1 {
				e.writeIndent(indent)
				if s[i+1] == ' ' {
					e.put('\\')
				}
			} else {
				e.put(' ')
			}
			spaces = true
		default:
			e.put(c)
			spaces = false
		}
	}
	e.indicator(`"`, false, false, false)
	e.whitespace, e.indention = false, false
}

// literal writes s, which has line breaks, as a "|" block scalar.
func (e *yamlEmitter) literal(s string, indent int) {
	e.indicator("|", true, false, false)
	if s[0] == ' ' || s[0] == '\n' {
		e.indicator("2", false, false, false)
	}
	switch last := len(s) - 1; {
	case s[last] != '\n':
		e.indicator("-", false, false, false)
	case last == 0 || s[last-1] == '\n':
		e.indicator("+", false, false, false)
	}
	e.putBreak()
	e.indention, e.whitespace = true, true
	breaks := true
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			e.putBreak()
			e.indention, breaks = true, true
			continue
		}
		if breaks {
			e.writeIndent(indent)
		}
		e.put(s[i])
		e.indention, breaks = false, false
	}
}

// yamlKeyLess is yaml.v2's order of string map keys: letters by code
// point, runs of digits by value, letters after other characters.
func yamlKeyLess(a, b string) bool {
	ar, br := []rune(a), []rune(b)
	for i := 0; i < len(ar) && i < len(br); i++ {
		if ar[i] == br[i] {
			continue
		}
		al, bl := unicode.IsLetter(ar[i]), unicode.IsLetter(br[i])
		if al && bl {
			return ar[i] < br[i]
		}
		if al || bl {
			return bl
		}
		var an, bn int64
		if ar[i] == '0' || br[i] == '0' {
			for j := i - 1; j >= 0 && unicode.IsDigit(ar[j]); j-- {
				if ar[j] != '0' {
					an, bn = 1, 1
					break
				}
			}
		}
		ai, bi := i, i
		for ; ai < len(ar) && unicode.IsDigit(ar[ai]); ai++ {
			an = an*10 + int64(ar[ai]-'0')
		}
		for ; bi < len(br) && unicode.IsDigit(br[bi]); bi++ {
			bn = bn*10 + int64(br[bi]-'0')
		}
		if an != bn {
			return an < bn
		}
		if ai != bi {
			return ai < bi
		}
		return ar[i] < br[i]
	}
	return len(ar) < len(br)
}

// yamlSpecial are the plain scalars YAML 1.1 reads as something other than
// a string (booleans, null, special floats, the merge key).
var yamlSpecial = map[string]bool{}

func init() {
	for _, s := range strings.Fields(`y Y yes Yes YES true True TRUE on On ON n N no No NO
		false False FALSE off Off OFF ~ null Null NULL .nan .NaN .NAN .inf .Inf .INF
		+.inf +.Inf +.INF -.inf -.Inf -.INF <<`) {
		yamlSpecial[s] = true
	}
}

var (
	yamlStyleFloat = regexp.MustCompile(`^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`)
	base60Float    = regexp.MustCompile(`^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`)
)

// plainResolvesToString reports whether yaml.v2 would read s, unquoted,
// back as a string (its resolve function); if not, s is double-quoted.
func plainResolvesToString(s string) bool {
	if s == "" {
		return false
	}
	switch c := s[0]; {
	case c == '.':
		if yamlSpecial[s] {
			return false
		}
		_, err := strconv.ParseFloat(s, 64)
		return err != nil
	case c == '+' || c == '-' || (c >= '0' && c <= '9'):
		return !resolvesToNumberOrTime(s)
	case strings.IndexByte("yYnNtTfFoO~", c) >= 0:
		return !yamlSpecial[s]
	}
	return true
}

// resolvesToNumberOrTime follows resolve for text starting with a digit or
// a sign.
func resolvesToNumberOrTime(s string) bool {
	if yamlSpecial[s] || isYAMLTimestamp(s) {
		return true
	}
	plain := strings.ReplaceAll(s, "_", "")
	if _, err := strconv.ParseInt(plain, 0, 64); err == nil {
		return true
	}
	if _, err := strconv.ParseUint(plain, 0, 64); err == nil {
		return true
	}
	if yamlStyleFloat.MatchString(plain) {
		if _, err := strconv.ParseFloat(plain, 64); err == nil {
			return true
		}
	}
	if rest, ok := strings.CutPrefix(plain, "0b"); ok {
		if _, err := strconv.ParseInt(rest, 2, 64); err == nil {
			return true
		}
		_, err := strconv.ParseUint(rest, 2, 64)
		return err == nil
	}
	if rest, ok := strings.CutPrefix(plain, "-0b"); ok {
		_, err := strconv.ParseInt("-"+rest, 2, 64)
		return err == nil
	}
	return false
}

var yamlTimestampFormats = []string{
	"2006-1-2T15:4:5.999999999Z07:00",
	"2006-1-2t15:4:5.999999999Z07:00",
	"2006-1-2 15:4:5.999999999",
	"2006-1-2",
}

// isYAMLTimestamp reports whether yaml.v2 reads s as a timestamp.
func isYAMLTimestamp(s string) bool {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i != 4 || i == len(s) || s[i] != '-' {
		return false
	}
	for _, f := range yamlTimestampFormats {
		if _, err := time.Parse(f, s); err == nil {
			return true
		}
	}
	return false
}

// isBase60Float reports whether yaml.v2 quotes s as a YAML 1.1 base 60
// number.
func isBase60Float(s string) bool {
	if s == "" {
		return false
	}
	c := s[0]
	if !(c == '+' || c == '-' || c >= '0' && c <= '9') || strings.IndexByte(s, ':') < 0 {
		return false
	}
	return base60Float.MatchString(s)
}
