package watch

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v4"
)

// Parsing YAML into nodes with go.yaml.in/yaml/v4 (a port of libyaml: a
// scanner, a token queue, an event parser and a composer, each allocating)
// was a quarter of the CPU time of loading a large folder. Kubernetes
// manifests almost always use a small part of YAML, so fastParse handles
// that part directly and hands everything else to go.yaml.in/yaml/v4.
//
// The subset: UTF-8 text without tabs, carriage returns or other control
// characters; block mappings and block sequences (with compact
// "- key: value" items and sequences at their key's indentation) nested at
// most maxFastDepth deep; single-line plain, single-quoted and
// double-quoted (with the escapes \\ \" \/ \t \n) scalars; literal block
// scalars ("|", "|-", "|+"); flow sequences and mappings that close on the
// line they open; comments. Anything else (folded scalars, explicit indentation,
// anchors, aliases, tags, multi-line plain or quoted scalars, empty values,
// directives, document markers, complex keys, syntax errors) makes
// fastParse give up, and the document is parsed again by
// go.yaml.in/yaml/v4, which also words the syntax errors.
//
// The contract, checked by FuzzFastParse against go.yaml.in/yaml/v4: when
// fastParse returns a tree, the reference parser succeeds on the same text
// and its tree has the same Kind, Style, Value, Line, Column and Content at
// every node. Those are the fields the loader reads; fastParse leaves Tag
// and the comment fields empty.

// fastParse parses one document. ok is false when the text is outside the
// subset; doc is nil (with ok true) when the text has no content.
func fastParse(data []byte) (doc *yaml.Node, ok bool) {
	return fastParseInto(data, &nodeArena{})
}

// fastParseInto is fastParse with the nodes taken from nodes: they are
// valid until it is reset.
func fastParseInto(data []byte, nodes *nodeArena) (doc *yaml.Node, ok bool) {
	ok, ascii := fastParseable(data)
	if !ok {
		return nil, false
	}
	p := &fastParser{data: data, text: string(data), line: 1, ascii: ascii, nodes: nodes}
	defer func() {
		if r := recover(); r != nil {
			if r != errFastUnsupported {
				panic(r)
			}
			doc, ok = nil, false
		}
	}()
	if !p.nextContentLine() {
		return nil, true
	}
	root := p.blockNode(-1)
	if !p.eof() {
		p.giveUp()
	}
	doc = p.newNode()
	*doc = yaml.Node{Kind: yaml.DocumentNode, Line: root.Line, Column: root.Column, Content: []*yaml.Node{root}}
	return doc, true
}

// fastParseable rejects, in one pass, text with characters the subset
// leaves out: tabs, carriage returns and other control characters, invalid
// UTF-8, and the characters YAML treats specially (a byte order mark; NEL,
// LS and PS, which YAML 1.1 counts as line breaks). It reports whether the
// text is all ASCII, in which case columns are byte offsets.
func fastParseable(data []byte) (ok, ascii bool) {
	ascii = true
	for i := 0; i < len(data); {
		b := data[i]
		if b < utf8.RuneSelf {
			if b == 0x7f || (b < 0x20 && b != '\n') {
				return false, false
			}
			i++
			continue
		}
		ascii = false
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError || r == 0xfeff || r == 0x85 || r == 0x2028 || r == 0x2029 || !unicode.IsPrint(r) {
			return false, false
		}
		i += size
	}
	return true, ascii
}

type fastUnsupported struct{}

// errFastUnsupported unwinds the parser when the text leaves the subset.
var errFastUnsupported = &fastUnsupported{}

// fastParser reads data line by line. Between constructs it rests at the
// first character of a content line (one that is not blank or a comment),
// whose indentation is indent, or at the end of data.
type fastParser struct {
	data      []byte
	text      string // data as a string, which scalar values are cut from
	pos       int    // current offset
	line      int    // 1-based line of pos
	lineStart int    // offset where the line of pos starts
	indent    int    // indentation of the current content line
	ascii     bool
	depth     int // collections open around pos

	nodes *nodeArena
}

func (p *fastParser) giveUp() { panic(errFastUnsupported) }

// maxFastDepth bounds nesting, well below go.yaml.in/yaml/v4's limit of
// 10,000 (deeper text is an error there, and the recursion here would
// otherwise exhaust the stack) and the converter's 1,000.
const maxFastDepth = 500

// enter counts a collection opening; the caller defers leave.
func (p *fastParser) enter() {
	p.depth++
	if p.depth > maxFastDepth {
		p.giveUp()
	}
}

func (p *fastParser) leave() { p.depth-- }

func (p *fastParser) eof() bool { return p.pos >= len(p.data) }

// column is the 1-based column of pos, counted in characters.
func (p *fastParser) column() int {
	if p.ascii {
		return p.pos - p.lineStart + 1
	}
	return utf8.RuneCount(p.data[p.lineStart:p.pos]) + 1
}

// newNode returns a node from the parser's arena.
func (p *fastParser) newNode() *yaml.Node { return p.nodes.node() }

func (p *fastParser) peek(off int) byte {
	if p.pos+off < len(p.data) {
		return p.data[p.pos+off]
	}
	return 0
}

// nextContentLine moves from the start of a line (or the end of a line's
// content) to the first character of the next content line, skipping blank
// lines and comments. It returns false at the end of data.
func (p *fastParser) nextContentLine() bool {
	for p.pos < len(p.data) {
		start := p.pos
		i := p.pos
		for i < len(p.data) && p.data[i] == ' ' {
			i++
		}
		if i < len(p.data) && p.data[i] != '\n' && p.data[i] != '#' {
			if i == start && isMarkerLine(p.data[i:]) {
				p.giveUp()
			}
			p.lineStart, p.indent, p.pos = start, i-start, i
			return true
		}
		nl := bytes.IndexByte(p.data[i:], '\n')
		if nl < 0 {
			p.pos = len(p.data)
			return false
		}
		p.pos = i + nl + 1
		p.line++
	}
	return false
}

// isMarkerLine reports lines that start with a directive or a document
// marker.
func isMarkerLine(b []byte) bool {
	return b[0] == '%' || bytes.HasPrefix(b, []byte("---")) || bytes.HasPrefix(b, []byte("..."))
}

// endLine checks that only blanks and a comment are left on the line, then
// moves to the next content line.
func (p *fastParser) endLine() {
	for p.pos < len(p.data) && p.data[p.pos] == ' ' {
		p.pos++
	}
	if p.pos < len(p.data) && p.data[p.pos] != '\n' {
		// A comment must be separated from what precedes it.
		if p.data[p.pos] != '#' || p.data[p.pos-1] != ' ' {
			p.giveUp()
		}
	}
	if nl := bytes.IndexByte(p.data[p.pos:], '\n'); nl >= 0 {
		p.pos += nl + 1
		p.line++
		p.nextContentLine()
	} else {
		p.pos = len(p.data)
	}
}

// blockNode parses the block collection that starts at the current
// position, which must be indented more than parent.
func (p *fastParser) blockNode(parent int) *yaml.Node {
	if p.indent <= parent {
		p.giveUp()
	}
	if p.isSeqEntry() {
		return p.sequence()
	}
	return p.mapping()
}

// isSeqEntry reports whether the current position is a "- " entry.
func (p *fastParser) isSeqEntry() bool {
	if p.peek(0) != '-' {
		return false
	}
	next := p.peek(1)
	return next == ' ' || next == '\n' || next == 0
}

// mapping parses a block mapping whose first key is at the current
// position; its keys are at that column.
func (p *fastParser) mapping() *yaml.Node {
	p.enter()
	defer p.leave()
	col := p.pos - p.lineStart
	m := p.newNode()
	*m = yaml.Node{Kind: yaml.MappingNode, Line: p.line, Column: p.column()}
	content := make([]*yaml.Node, 0, 8)
	for {
		key := p.key()
		content = append(content, key, p.mappingValue(col))
		if p.eof() || p.indent < col {
			break
		}
		if p.indent > col || p.isSeqEntry() {
			p.giveUp()
		}
	}
	m.Content = content
	return m
}

// mappingValue parses the value after "key:" of a mapping at column col.
func (p *fastParser) mappingValue(col int) *yaml.Node {
	for p.pos < len(p.data) && p.data[p.pos] == ' ' {
		p.pos++
	}
	if p.peek(0) == '|' {
		return p.literal(col)
	}
	if p.pos < len(p.data) && p.data[p.pos] != '\n' && p.data[p.pos] != '#' {
		v := p.inlineValue(false)
		p.endLine()
		return v
	}
	// The value is on the following lines: a nested collection, or a
	// sequence at the key's own indentation.
	p.endLine()
	if p.eof() || p.indent < col {
		p.giveUp() // empty value
	}
	if p.indent == col {
		if !p.isSeqEntry() {
			p.giveUp() // empty value
		}
		return p.sequence()
	}
	return p.blockNode(col)
}

// sequence parses a block sequence whose first "-" is at the current
// position.
func (p *fastParser) sequence() *yaml.Node {
	p.enter()
	defer p.leave()
	col := p.pos - p.lineStart
	s := p.newNode()
	*s = yaml.Node{Kind: yaml.SequenceNode, Line: p.line, Column: p.column()}
	content := make([]*yaml.Node, 0, 4)
	for {
		p.pos++ // the "-"
		for p.pos < len(p.data) && p.data[p.pos] == ' ' {
			p.pos++
		}
		if p.pos >= len(p.data) || p.data[p.pos] == '\n' || p.data[p.pos] == '#' || p.isSeqEntry() {
			p.giveUp() // item on the following lines, or a nested "- -"
		}
		var item *yaml.Node
		if p.peek(0) == '|' {
			item = p.literal(col)
		} else if p.isKeyLine() {
			item = p.mapping()
		} else {
			item = p.inlineValue(false)
			p.endLine()
		}
		content = append(content, item)
		if p.eof() || p.indent < col {
			break
		}
		if p.indent > col {
			p.giveUp()
		}
		if !p.isSeqEntry() {
			break // the next key of the mapping this sequence is a value of
		}
	}
	s.Content = content
	return s
}

// literal parses a literal block scalar ("|", "|-" or "|+") whose
// content is indented more than parent, and moves to the next content
// line. Explicit indentation, leading blank lines and blank lines longer
// than the indentation are left to the reference parser.
func (p *fastParser) literal(parent int) *yaml.Node {
	n := p.newNode()
	*n = yaml.Node{Kind: yaml.ScalarNode, Style: yaml.LiteralStyle, Line: p.line, Column: p.column()}
	p.pos++
	chomp := byte(0)
	if c := p.peek(0); c == '-' || c == '+' {
		chomp = c
		p.pos++
	}
	if c := p.peek(0); c != ' ' && c != '\n' && c != 0 {
		p.giveUp() // indentation indicator, or text after the indicator
	}
	// The rest of the header line: blanks and a comment.
	for p.pos < len(p.data) && p.data[p.pos] == ' ' {
		p.pos++
	}
	if c := p.peek(0); c != '\n' && c != 0 && (c != '#' || p.data[p.pos-1] != ' ') {
		p.giveUp()
	}
	nl := bytes.IndexByte(p.data[p.pos:], '\n')
	if nl < 0 {
		p.giveUp() // empty scalar at the end of the text
	}
	p.pos += nl + 1
	p.line++

	var (
		b       strings.Builder
		indent  = -1
		breaks  int  // blank lines not yet written
		lastNL  bool // the last text line ended with a line break
		sawText bool
	)
	for p.pos < len(p.data) {
		start := p.pos
		end := len(p.data)
		if i := bytes.IndexByte(p.data[start:], '\n'); i >= 0 {
			end = start + i
		}
		line := p.data[start:end]
		spaces := 0
		for spaces < len(line) && line[spaces] == ' ' {
			spaces++
		}
		if spaces == len(line) { // blank line
			if !sawText || (indent >= 0 && spaces > indent) {
				p.giveUp()
			}
			if end == len(p.data) {
				if chomp == '+' {
					p.giveUp() // kept, a final blank line counts as a break
				}
				break
			}
			breaks++
			p.pos, p.line = end+1, p.line+1
			continue
		}
		if indent < 0 {
			if spaces <= parent {
				p.giveUp() // empty scalar
			}
			indent = spaces
		}
		if spaces < indent {
			break
		}
		if sawText {
			b.WriteByte('\n')
		}
		for range breaks {
			b.WriteByte('\n')
		}
		breaks = 0
		b.Write(line[indent:])
		sawText = true
		lastNL = end < len(p.data)
		if end == len(p.data) {
			if chomp == '+' {
				p.giveUp()
			}
			p.pos = end
			break
		}
		p.pos, p.line = end+1, p.line+1
	}
	// Chomping: clip keeps the last line break, strip drops it, keep keeps
	// the trailing blank lines too.
	switch chomp {
	case 0:
		if lastNL {
			b.WriteByte('\n')
		}
	case '+':
		if lastNL {
			b.WriteByte('\n')
		}
		for range breaks {
			b.WriteByte('\n')
		}
	}
	n.Value = b.String()
	// Resume at the line that ended the scalar, as endLine would.
	p.lineStart = p.pos
	if p.pos < len(p.data) {
		p.nextContentLine()
	}
	return n
}

// isKeyLine reports whether the text at the current position is
// "key: ..." (without moving).
func (p *fastParser) isKeyLine() bool {
	save := p.pos
	defer func() { p.pos = save }()
	switch c := p.peek(0); c {
	case '"', '\'':
		p.quoted(c)
	default:
		if !plainStart(p.data, p.pos, false) {
			return false
		}
		end, _ := p.plainEnd(false)
		p.pos = end
	}
	for p.pos < len(p.data) && p.data[p.pos] == ' ' {
		p.pos++
	}
	return p.peek(0) == ':' && isBlankOrEnd(p.peek(1))
}

// key parses "key:" and leaves the position after the colon.
func (p *fastParser) key() *yaml.Node {
	var k *yaml.Node
	switch c := p.peek(0); c {
	case '"', '\'':
		k = p.quoted(c)
	default:
		k = p.plain(false)
	}
	if len(k.Value) > 1000 {
		p.giveUp() // rare; left to the reference parser's simple-key rules
	}
	for p.pos < len(p.data) && p.data[p.pos] == ' ' {
		p.pos++
	}
	if p.peek(0) != ':' || !isBlankOrEnd(p.peek(1)) {
		p.giveUp()
	}
	p.pos++
	return k
}

// inlineValue parses a scalar or a flow collection that ends on this line
// (in a block) or an entry of a flow collection (flow).
func (p *fastParser) inlineValue(flow bool) *yaml.Node {
	switch c := p.peek(0); c {
	case '[', '{':
		return p.flow()
	case '"', '\'':
		return p.quoted(c)
	}
	v := p.plain(flow)
	switch c := p.peek(0); {
	case !flow && c == ':':
		// "key: a: b" is an error; a colon that ends the line starts a
		// mapping.
		p.giveUp()
	case flow && c != ',' && c != ']' && c != '}' && c != ':' && c != ' ':
		// A comment or the end of the line inside the collection.
		p.giveUp()
	}
	return v
}

// plainStart reports whether a plain scalar may start at data[i].
func plainStart(data []byte, i int, flow bool) bool {
	if i >= len(data) {
		return false
	}
	switch data[i] {
	case '-', '?', ':':
		next := byte(0)
		if i+1 < len(data) {
			next = data[i+1]
		}
		return !isBlankOrEnd(next) && !(flow && isFlowIndicator(next))
	case ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', ' ', '\n':
		return false
	}
	return true
}

func isBlankOrEnd(c byte) bool { return c == ' ' || c == '\n' || c == 0 }

func isFlowIndicator(c byte) bool {
	return c == ',' || c == '[' || c == ']' || c == '{' || c == '}'
}

// plainEnd finds the end of the plain scalar at the current position
// (trailing blanks excluded) and the offset where scanning stopped.
func (p *fastParser) plainEnd(flow bool) (end, stop int) {
	i := p.pos
	end = i
	for i < len(p.data) {
		c := p.data[i]
		switch {
		case c == '\n':
			return end, i
		case c == ' ':
			if i+1 < len(p.data) && p.data[i+1] == '#' {
				return end, i
			}
			i++
			continue
		case c == ':':
			next := byte(0)
			if i+1 < len(p.data) {
				next = p.data[i+1]
			}
			if isBlankOrEnd(next) {
				return end, i
			}
			if flow {
				p.giveUp() // libyaml's flow-context colon rules: not in the subset
			}
		case flow && isFlowIndicator(c):
			return end, i
		}
		i++
		end = i
	}
	return end, i
}

// plain parses a plain scalar on one line.
func (p *fastParser) plain(flow bool) *yaml.Node {
	if !plainStart(p.data, p.pos, flow) {
		p.giveUp()
	}
	end, stop := p.plainEnd(flow)
	n := p.newNode()
	*n = yaml.Node{Kind: yaml.ScalarNode, Value: p.text[p.pos:end], Line: p.line, Column: p.column()}
	// A plain scalar may continue on more indented lines; the callers
	// give up on those, as on any deeper indentation.
	p.pos = stop
	return n
}

// quoted parses a single- or double-quoted scalar that ends on this line.
// Double-quoted scalars with escapes other than unescape's are left to the
// reference parser.
func (p *fastParser) quoted(q byte) *yaml.Node {
	start := p.pos + 1
	i := start
	escaped := false
	for {
		if i >= len(p.data) || p.data[i] == '\n' {
			p.giveUp()
		}
		if q == '"' && p.data[i] == '\\' {
			escaped = true
			i += 2 // the escaped character is checked when decoding
			continue
		}
		if p.data[i] == q {
			if q == '\'' && i+1 < len(p.data) && p.data[i+1] == '\'' {
				i += 2
				continue
			}
			break
		}
		i++
	}
	value := p.text[start:i]
	style := yaml.DoubleQuotedStyle
	if q == '\'' {
		style = yaml.SingleQuotedStyle
		if strings.Contains(value, "''") {
			value = strings.ReplaceAll(value, "''", "'")
		}
	} else if escaped {
		value = p.unescape(value)
	}
	n := p.newNode()
	*n = yaml.Node{Kind: yaml.ScalarNode, Style: style, Value: value, Line: p.line, Column: p.column()}
	p.pos = i + 1
	return n
}

// unescape decodes the escapes of a double-quoted scalar that regular
// expressions and paths use (\\ \" \/ \t \n); any other escape is left to
// the reference parser.
func (p *fastParser) unescape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			p.giveUp()
		}
		switch s[i] {
		case '\\', '"', '/':
			b.WriteByte(s[i])
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		default:
			p.giveUp()
		}
	}
	return b.String()
}

// flow parses a flow sequence or mapping that closes on this line.
func (p *fastParser) flow() *yaml.Node {
	p.enter()
	defer p.leave()
	open := p.peek(0)
	n := p.newNode()
	*n = yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle, Line: p.line, Column: p.column()}
	closer := byte(']')
	if open == '{' {
		n.Kind, closer = yaml.MappingNode, '}'
	}
	p.pos++
	var content []*yaml.Node
	for {
		p.skipFlowSpaces()
		if p.peek(0) == closer {
			p.pos++
			break
		}
		if n.Kind == yaml.MappingNode {
			k := p.inlineValue(true)
			if k.Kind != yaml.ScalarNode {
				p.giveUp() // complex key
			}
			p.skipFlowSpaces()
			if p.peek(0) != ':' {
				p.giveUp()
			}
			p.pos++
			p.skipFlowSpaces()
			if c := p.peek(0); c == ',' || c == closer {
				p.giveUp() // empty value
			}
			content = append(content, k, p.inlineValue(true))
		} else {
			content = append(content, p.inlineValue(true))
		}
		p.skipFlowSpaces()
		switch p.peek(0) {
		case ',':
			p.pos++
			p.skipFlowSpaces()
			if p.peek(0) == ',' {
				p.giveUp()
			}
		case closer:
		default:
			p.giveUp()
		}
	}
	n.Content = content
	return n
}

func (p *fastParser) skipFlowSpaces() {
	for p.pos < len(p.data) && p.data[p.pos] == ' ' {
		p.pos++
	}
}
