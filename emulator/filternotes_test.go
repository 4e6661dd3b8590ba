package emulator

import (
	"slices"
	"testing"

	"github.com/gwdev/gwdev/engine/table"
)

// TestCollectFilterNotes holds the trace's filter list that collect writes
// for header modifiers (from the notes compileFilters made, addNote) to
// the one appended note by note: at a list's start, after the rule's list
// (the backend's second collect), after an unsupported filter; and the
// lists made once have no room an append would write into.
func TestCollectFilterNotes(t *testing.T) {
	req := func(name string) table.Filter {
		return table.Filter{Type: table.FilterRequestHeaderModifier,
			RequestHeaderModifier: &table.HeaderModifier{Set: []table.Header{{Name: name, Value: "v"}}}}
	}
	resp := func(name string) table.Filter {
		return table.Filter{Type: table.FilterResponseHeaderModifier,
			ResponseHeaderModifier: &table.HeaderModifier{Remove: []string{name}}}
	}
	unsupported := table.Filter{Type: table.FilterExtensionRef, Unsupported: "not supported"}
	for _, tc := range []struct {
		name         string
		rule, second []table.Filter
	}{
		{"one", []table.Filter{req("A")}, nil},
		{"three", []table.Filter{req("A"), resp("B"), req("C")}, nil},
		{"rule then backend", []table.Filter{req("A"), resp("B")}, []table.Filter{req("C"), resp("D")}},
		{"backend only", nil, []table.Filter{req("C")}},
		{"after unsupported", []table.Filter{unsupported, req("A")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want []string
			for _, fs := range [][]table.Filter{tc.rule, tc.second} {
				for _, s := range compileFilters(fs, nil) {
					switch {
					case s.unsupported != "":
						want = append(want, string(s.typ)+": "+s.unsupported)
					case s.note != "":
						want = append(want, s.note)
					}
				}
			}
			for range 2 { // the lists made once are the same the second time
				rule, second := compileFilters(tc.rule, nil), compileFilters(tc.second, nil)
				ex := &exchange{}
				ex.reqMods, ex.respMods = ex.modsArr[:0:2], ex.modsArr[2:2:4]
				if _, done := ex.collect(rule, nil, nil); !done {
					ex.collect(second, nil, nil)
				} else {
					want = want[:len(ex.trace.Filters)]
				}
				got := ex.trace.Filters
				if !slices.Equal(got, want) {
					t.Fatalf("filters %q, want %q", got, want)
				}
				for _, steps := range [][]filterStep{rule, second} {
					for _, s := range steps {
						if cap(s.notes) != len(s.notes) {
							t.Fatalf("notes %q have room for an append to write into", s.notes)
						}
					}
				}
			}
		})
	}
}
