package watch

import (
	"encoding/binary"
	"regexp"
	"regexp/syntax"
	"slices"
)

// A schema's patterns (a hostname's, a path's, a header name's) are checked
// on every string of every object, and Go's regexp matches them by
// backtracking: for 1,000 HTTPRoutes it took ~6% of the load's CPU. A
// pattern is therefore also compiled, once, into a deterministic automaton
// over ASCII (patternDFA), built by subset construction from the program
// regexp itself compiles, so that it accepts exactly what the program
// accepts; matching is then one table lookup per byte. A value with a byte
// outside ASCII, and a pattern the construction does not take (word
// boundaries, multi-line anchors, more than maxDFAStates states), go to the
// regexp. TestPatternDFAMatchesRegexp and FuzzPatternDFA compare the two.

// maxDFAStates bounds a pattern's automaton (128 transitions of 4 bytes
// each per state: 512 KB at most per pattern).
const maxDFAStates = 1024

// dfaDead is the transition to the state from which nothing matches.
const dfaDead = -1

// patternDFA is a pattern compiled for regexp.MatchString's question (does
// the value contain a match?) over ASCII values. State 0 is the state
// before the first byte.
type patternDFA struct {
	// next holds each state's transitions: next[state*128+byte].
	next []int32
	// matched reports, per state, that a match ends at this point.
	matched []bool
	// atEnd reports, per state, that a match ends at the end of the text
	// when the text ends in this state.
	atEnd []bool
}

// patternMatcher matches one schema pattern: through its automaton when it
// has one and the value is ASCII, otherwise through re.
type patternMatcher struct {
	re  *regexp.Regexp
	dfa *patternDFA
}

// newPatternMatcher compiles pattern; nil when regexp cannot compile it.
func newPatternMatcher(pattern string) *patternMatcher {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil
	}
	return &patternMatcher{re: re, dfa: compilePatternDFA(pattern)}
}

// MatchString reports whether s contains a match of the pattern, as
// regexp.Regexp.MatchString does.
func (m *patternMatcher) MatchString(s string) bool {
	if m.dfa != nil {
		if matched, ok := m.dfa.match(s); ok {
			return matched
		}
	}
	return m.re.MatchString(s)
}

// match reports whether s contains a match; ok is false when s holds a
// byte outside ASCII (the caller asks the regexp).
func (d *patternDFA) match(s string) (matched, ok bool) {
	st := int32(0)
	if d.matched[0] {
		return true, true
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= 0x80 {
			return false, false
		}
		st = d.next[int(st)<<7|int(b)]
		if st == dfaDead {
			return false, true
		}
		if d.matched[st] {
			return true, true
		}
	}
	return d.atEnd[st], true
}

// compilePatternDFA builds pattern's automaton as regexp.Compile would
// parse it (syntax.Perl); nil when the pattern uses what the construction
// does not handle or needs more than maxDFAStates states.
func compilePatternDFA(pattern string) *patternDFA {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return nil
	}
	for _, in := range prog.Inst {
		if in.Op == syntax.InstEmptyWidth && syntax.EmptyOp(in.Arg)&^(syntax.EmptyBeginText|syntax.EmptyEndText) != 0 {
			return nil
		}
	}
	b := dfaBuilder{prog: prog, index: map[string]int32{}}
	classes := b.byteClasses()
	// State 0: the text's start, where ^ holds. It is never shared with a
	// later state, whose threads are at a later position.
	start, matched := b.closure([]uint32{uint32(prog.Start)}, true)
	b.add("0", slices.Clone(start), matched, b.acceptsAtEnd(start, true))
	for i := 0; i < len(b.sets); i++ {
		if len(b.sets) > maxDFAStates {
			return nil
		}
		for _, class := range classes {
			n := b.step(b.sets[i], rune(class[0]))
			for _, c := range class {
				b.d.next[i<<7|int(c)] = n
			}
		}
	}
	if len(b.sets) > maxDFAStates {
		return nil
	}
	return &b.d
}

// dfaBuilder makes a patternDFA by subset construction. A state is the set
// of the program's threads at one position: instructions that consume a
// rune, and $ (EmptyEndText) waiting for the text's end. An unanchored
// search starts a thread at every position: every state after the first
// holds the program's start too.
type dfaBuilder struct {
	prog  *syntax.Prog
	d     patternDFA
	sets  [][]uint32
	index map[string]int32
	seen  []bool
	stack []uint32
	// reads holds, per instruction, the ASCII bytes it reads (a bit each).
	reads [][2]uint64
	// from, out and key are buffers step and follow reuse.
	from, out []uint32
	key       []byte
}

// add records a new state and returns its number.
func (b *dfaBuilder) add(key string, set []uint32, matched, atEnd bool) int32 {
	n := int32(len(b.sets))
	b.index[key] = n
	b.sets = append(b.sets, set)
	b.d.matched = append(b.d.matched, matched)
	b.d.atEnd = append(b.d.atEnd, atEnd)
	b.d.next = append(b.d.next, make([]int32, 128)...)
	return n
}

// step returns the state after the threads of set read c.
func (b *dfaBuilder) step(set []uint32, c rune) int32 {
	b.from = b.from[:0]
	for _, pc := range set {
		if b.reads[pc][c>>6]>>(c&63)&1 != 0 {
			b.from = append(b.from, b.prog.Inst[pc].Out)
		}
	}
	b.from = append(b.from, uint32(b.prog.Start))
	next, matched := b.closure(b.from, false)
	if len(next) == 0 && !matched {
		return dfaDead
	}
	b.key = append(b.key[:0], 'n')
	if matched {
		b.key[0] = 'm'
	}
	for _, pc := range next {
		b.key = binary.AppendUvarint(b.key, uint64(pc))
	}
	if n, ok := b.index[string(b.key)]; ok {
		return n
	}
	if len(b.sets) > maxDFAStates {
		return dfaDead // the construction gives up (checked by the caller)
	}
	return b.add(string(b.key), slices.Clone(next), matched, matched || b.acceptsAtEnd(next, false))
}

// byteClasses splits ASCII into the sets of bytes that every instruction
// of b's program reads alike, so that a state's transitions are computed
// once per class (a hostname's pattern has 6 classes) instead of once per
// byte. It fills b.reads first.
func (b *dfaBuilder) byteClasses() [][]byte {
	b.reads = make([][2]uint64, len(b.prog.Inst))
	var distinct [][2]uint64
	for i := range b.prog.Inst {
		in := &b.prog.Inst[i]
		var m [2]uint64
		for c := 0; c < 128; c++ {
			if consumes(in, rune(c)) {
				m[c>>6] |= 1 << (c & 63)
			}
		}
		b.reads[i] = m
		if m != ([2]uint64{}) && !slices.Contains(distinct, m) {
			distinct = append(distinct, m)
		}
	}
	index := map[string]int{}
	var classes [][]byte
	sig := make([]byte, len(distinct))
	for c := 0; c < 128; c++ {
		for i, m := range distinct {
			sig[i] = byte(m[c>>6] >> (c & 63) & 1)
		}
		k, ok := index[string(sig)]
		if !ok {
			k = len(classes)
			index[string(sig)] = k
			classes = append(classes, nil)
		}
		classes[k] = append(classes[k], byte(c))
	}
	return classes
}

// consumes reports whether the rune instruction in reads c.
func consumes(in *syntax.Inst, c rune) bool {
	switch in.Op {
	case syntax.InstRune:
		return in.MatchRune(c)
	case syntax.InstRune1:
		return c == in.Rune[0]
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return c != '\n'
	}
	return false
}

// closure follows from the threads at pcs everything that reads no rune,
// at the text's start when begin. It returns, sorted, the threads that
// read a rune or wait for the text's end, and whether a match is reached.
func (b *dfaBuilder) closure(pcs []uint32, begin bool) ([]uint32, bool) {
	return b.follow(pcs, begin, false)
}

// acceptsAtEnd reports whether a match is reached from set when the text
// ends there.
func (b *dfaBuilder) acceptsAtEnd(set []uint32, begin bool) bool {
	_, matched := b.follow(set, begin, true)
	return matched
}

func (b *dfaBuilder) follow(pcs []uint32, begin, end bool) ([]uint32, bool) {
	if b.seen == nil {
		b.seen = make([]bool, len(b.prog.Inst))
	}
	clear(b.seen)
	out := b.out[:0]
	matched := false
	b.stack = append(b.stack[:0], pcs...)
	for len(b.stack) > 0 {
		pc := b.stack[len(b.stack)-1]
		b.stack = b.stack[:len(b.stack)-1]
		if b.seen[pc] {
			continue
		}
		b.seen[pc] = true
		in := &b.prog.Inst[pc]
		switch in.Op {
		case syntax.InstMatch:
			matched = true
		case syntax.InstFail:
		case syntax.InstAlt, syntax.InstAltMatch:
			b.stack = append(b.stack, in.Arg, in.Out)
		case syntax.InstNop, syntax.InstCapture:
			b.stack = append(b.stack, in.Out)
		case syntax.InstEmptyWidth:
			op := syntax.EmptyOp(in.Arg)
			switch {
			case op&syntax.EmptyBeginText != 0 && !begin:
				// ^ after the start never holds.
			case op&syntax.EmptyEndText != 0 && !end:
				out = append(out, pc)
			default:
				b.stack = append(b.stack, in.Out)
			}
		default:
			out = append(out, pc)
		}
	}
	slices.Sort(out)
	b.out = out
	return out, matched
}
