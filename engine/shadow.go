package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/gwdev/gwdev/engine/table"
)

// Shadowed rules: a route match that can never receive a request on a
// virtual host, because a match tried before it (the table is in the
// spec's precedence order, and the data plane takes the first match)
// accepts every request it would. Both routes are Accepted, so status says
// nothing; gwdev reports a warning finding on the shadowed route naming the
// winner and the precedence criterion that put it first. Only a single
// earlier match that covers the whole match counts (coverChecker), so there
// are no false warnings; a match covered only by several earlier ones
// together is not reported.

// Shadow is one shadowed match on one virtual host.
type Shadow struct {
	// Loser never matches on VirtualHost; Winner is the earliest rule
	// before it that accepts every request Loser would.
	Loser, Winner *RouteRule
	Listener      *ListenerTable
	VirtualHost   *VirtualHost
	// Why is the precedence criterion that puts Winner first.
	Why string
	// loserRoute and winnerRoute are the rules' route objects (nil:
	// unknown), for describing their matches as written.
	loserRoute, winnerRoute object
}

// shadowIndex holds the rules of a virtual host seen so far, by what can
// cover a new rule. One index serves every virtual host of a table in
// turn (reset): its maps and lists are reused, so that finding the
// shadows of 10,000 routes' virtual hosts allocates next to nothing at
// the end of the translation, when it holds the most (issue 42, part 3:
// 4.6 MB, 50,000 allocations, before).
type shadowIndex struct {
	// exact and prefix give, for an HTTP Exact path or a normalised
	// PathPrefix value, the last rule with it plus one (0: none); earlier
	// ones follow through next.
	exact, prefix map[string]int
	// next is, per rule, the previous rule with its path plus one (0: none).
	next  []int
	regex []int // HTTP RegularExpression paths
	grpc  []int // GRPCRoute matches
	// cands is candidates' result, reused.
	cands []int
	// out is findShadows' result, reused.
	out [][2]int
}

// reset empties the index for another virtual host. A map grown large by
// one virtual host is made anew rather than cleared for every later one.
func (x *shadowIndex) reset() {
	const keep = 64
	if x.exact == nil || len(x.exact) > keep {
		x.exact = map[string]int{}
	} else {
		clear(x.exact)
	}
	if x.prefix == nil || len(x.prefix) > keep {
		x.prefix = map[string]int{}
	} else {
		clear(x.prefix)
	}
	x.next, x.regex, x.grpc, x.out = x.next[:0], x.regex[:0], x.grpc[:0], x.out[:0]
}

// findShadows lists the shadowed matches of a virtual host, in x's
// storage: valid until the next call.
func findShadows(c *coverChecker, x *shadowIndex, vh *VirtualHost) [][2]int {
	x.reset()
	for j, b := range vh.Rules {
		cands := x.candidates(b)
		slices.Sort(cands)
		for _, i := range cands {
			if c.covers(vh.Rules[i], b) {
				x.out = append(x.out, [2]int{i, j})
				break
			}
		}
		x.add(j, b)
	}
	return x.out
}

// add indexes rule j, the next after those added since reset.
func (x *shadowIndex) add(j int, r *RouteRule) {
	x.next = append(x.next, 0)
	if r.GRPC != nil {
		x.grpc = append(x.grpc, j)
		return
	}
	typ, v := r.HTTP.Path.Type, r.HTTP.Path.Value
	switch typ {
	case table.MatchExact:
		x.next[j], x.exact[v] = x.exact[v], j+1
	case table.MatchPathPrefix:
		x.next[j], x.prefix[v] = x.prefix[v], j+1
	default:
		x.regex = append(x.regex, j)
	}
}

// appendChain appends the rules of a chain starting at head (a rule plus
// one, 0: none).
func (x *shadowIndex) appendChain(out []int, head int) []int {
	for k := head; k != 0; k = x.next[k-1] {
		out = append(out, k-1)
	}
	return out
}

// candidates returns the earlier rules that might cover r (unsorted), in
// x's storage: valid until the next call.
func (x *shadowIndex) candidates(r *RouteRule) []int {
	if r.GRPC != nil {
		x.cands = append(x.cands[:0], x.grpc...)
		return x.cands
	}
	typ, v := r.HTTP.Path.Type, r.HTTP.Path.Value
	out := append(x.cands[:0], x.regex...)
	if typ != table.MatchRegularExpression {
		if typ == table.MatchExact {
			out = x.appendChain(out, x.exact[v])
		}
		out = x.appendChain(out, x.prefix[""])
		for k := 1; k < len(v); k++ {
			if v[k] == '/' {
				out = x.appendChain(out, x.prefix[v[:k]])
			}
		}
		if v != "" && !strings.HasSuffix(v, "/") {
			out = x.appendChain(out, x.prefix[v])
		}
	}
	x.cands = out
	return out
}

// tableShadows lists every shadowed match of the table, listener by listener.
// route gives a route's object for the precedence explanation (nil: the
// explanation says only that table order decides).
func tableShadows(tab *Table, route func(ObjectKey) object) []Shadow {
	var c coverChecker
	var x shadowIndex
	var out []Shadow
	EachListener(tab, func(l *ListenerTable) {
		for _, vh := range l.VirtualHosts {
			for _, s := range findShadows(&c, &x, vh) {
				w, lo := vh.Rules[s[0]], vh.Rules[s[1]]
				ow, ol := route(w.Route), route(lo.Route)
				out = append(out, Shadow{Loser: lo, Winner: w, Listener: l, VirtualHost: vh,
					Why: precedenceReason(vh.Hostname, w, lo, ow, ol), loserRoute: ol, winnerRoute: ow})
			}
		}
	})
	return out
}

// Shadows lists every route match of the result's table that can never
// receive a request because an earlier match takes all of them.
func (r *Result) Shadows() []Shadow {
	if r.Table == nil {
		return nil
	}
	return tableShadows(r.Table, r.routeObject)
}

// noteShadowedRules adds a warning per shadowed match, naming every
// listener and host where it is shadowed by the same winner.
func (t *translator) noteShadowedRules(tab *Table) {
	type group struct {
		s      Shadow
		places []string
	}
	var groups []*group
	byPair := map[[2]string]*group{}
	for _, s := range tableShadows(tab, t.routeObject) {
		k := [2]string{s.Loser.Name, s.Winner.Name}
		g := byPair[k]
		if g == nil {
			g = &group{s: s}
			byPair[k] = g
			groups = append(groups, g)
		}
		g.places = append(g.places, shadowPlace(s.Listener, s.VirtualHost))
	}
	for _, g := range groups {
		s := g.s
		i, j := ruleIndexes(s.Loser.Name)
		t.notes = append(t.notes, Finding{Severity: SeverityWarning, Object: s.Loser.Route, Source: s.Loser.Source,
			Scope: fmt.Sprintf("rules[%d].matches[%d]", i, j), Field: fmt.Sprintf("spec.rules[%d].matches[%d]", i, j), Reason: ReasonShadowed, Message: ShadowMessage(s, g.places)})
	}
}

// routeObject is the route object of the translation's route k (nil:
// none), for the shadow findings' explanations. Its index is made when
// first asked: most translations have no shadow to explain, and at
// 10,000 routes the index was 1.1 MB allocated at the end of the
// translation, when it holds the most (issue 42, part 3).
func (t *translator) routeObject(k ObjectKey) object {
	if t.routeObjects == nil {
		t.routeObjects = make(map[ObjectKey]object, len(t.routes))
		for _, r := range t.routes {
			t.routeObjects[r.key] = r.obj
		}
	}
	return t.routeObjects[k]
}

// ReasonShadowed is the Reason of the findings about shadowed rules (a
// gwdev finding, not a status condition reason).
const ReasonShadowed = "ShadowedRule"

// ShadowMessage words a shadow finding: the match, where it never
// matches, the winner, and the precedence criterion.
func ShadowMessage(s Shadow, places []string) string {
	return fmt.Sprintf("%s (%s) never receives a request on %s: %s (%s) is tried first and matches every request it would; %s",
		ruleLabel(s.Loser), describeMatch(s.Loser, s.loserRoute), strings.Join(places, "; "),
		ruleLabel(s.Winner), describeMatch(s.Winner, s.winnerRoute), s.Why)
}

// shadowPlace names a listener and virtual host, e.g.
// `Gateway default/gw listener "http" host "*"`.
func shadowPlace(l *ListenerTable, vh *VirtualHost) string {
	return fmt.Sprintf("%s %s/%s listener %q host %q", l.Owner.Kind, l.Owner.Namespace, l.Owner.Name, l.SectionName, displayVHost(vh.Hostname))
}
