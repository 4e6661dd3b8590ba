package emulator

import "github.com/gwdev/gwdev/engine/table"

// Reuse between compiles: the engine hands an unchanged route's rules to
// the next table as the same *table.RouteRule values (engine/incremental.go)
// and never edits a table it has returned, so a rule pointer the last
// router compiled stands for the same rule. compile then takes the last
// router's ruleRoutes for it instead of compiling it again, and the last
// virtual host whose name, hostname and rules (by pointer) are the same.
// Routers share what they reuse; nothing in a compiled rule or virtual
// host that a request reads is written after compile, so requests in
// flight on the old router are not affected.
//
// The pool's maps (rules, virtual hosts, upstreams, retry budgets) are
// kept from one compile to the next rather than built anew: each compile
// has a generation, marks what it uses (gen fields, written and read by
// compile only, under Server.mu; requests never read them), and at its end
// sweeps what it did not mark (sweep). A reused virtual host's rules, their
// backends, upstreams and budgets are marked by following pointers, no map
// written or looked up per rule, and only when something the last router
// used may be left (finish). Before, every compile registered each reused
// rule, backend and upstream in new maps (upstreams by their string key):
// most of Apply's time at 10,000 routes.

// reuseRule returns the last router's compiled r, marked as used by this
// compile (nil: none, or a rule with a rate limit, whose counters each
// compile starts afresh for all the rules sharing it). A rule compiled or
// reused earlier in this compile is returned as it is.
func (c *compiler) reuseRule(r *table.RouteRule) *ruleRoutes {
	rr := c.pool.rules[r]
	switch {
	case rr == nil:
		return nil
	case rr.gen == c.gen:
		return rr
	case rr.limiter != nil:
		return nil
	}
	c.markRule(rr)
	return rr
}

// markRule marks a reused rule and what it holds as used by this compile.
func (c *compiler) markRule(rr *ruleRoutes) {
	if rr.gen == c.gen {
		return
	}
	rr.gen = c.gen
	c.used.rules++
	for _, b := range rr.backends {
		c.markBackend(b)
	}
	for _, b := range rr.mirrors {
		c.markBackend(b)
	}
	c.markAuths(rr.auths)
	if rr.errorPages != nil {
		c.markBackend(rr.errorPages.backend)
	}
}

// markBackend marks a reused backend, its upstream and retry budget (and
// those of its mirrors and auth backends) as used by this compile.
func (c *compiler) markBackend(br *backendRoutes) {
	if br == nil || br.gen == c.gen {
		return
	}
	br.gen = c.gen
	if u := br.up; u != nil {
		c.markUpstream(u)
	}
	if b := br.budget; b != nil {
		c.markBudget(b)
	}
	for _, m := range br.mirrors {
		c.markBackend(m)
	}
	c.markAuths(br.auths)
}

func (c *compiler) markUpstream(u *upstream) {
	if u.gen != c.gen {
		u.gen = c.gen
		c.used.upstreams++
	}
}

func (c *compiler) markBudget(b *retryBudget) {
	if b.gen != c.gen {
		b.gen = c.gen
		c.used.budgets++
	}
}

func (c *compiler) markAuths(as []*extAuthRoutes) {
	for _, a := range as {
		if a != nil {
			c.markBackend(a.backend)
		}
	}
}

// reuseVHost returns the last router's virtual host of vh's name when it
// has vh's hostname and rules, marked as used by this compile (nil: none,
// or one holding a rule with a rate limit, compiled afresh).
func (c *compiler) reuseVHost(vh *table.VirtualHost) *vhostRoutes {
	v := c.pool.vhosts[vh.Name]
	if v == nil {
		return nil
	}
	if v.vh != vh { // the same table value holds the same rules
		if v.vh.Hostname != vh.Hostname || len(v.vh.Rules) != len(vh.Rules) {
			return nil
		}
		for i, r := range vh.Rules {
			if v.vh.Rules[i] != r {
				return nil
			}
		}
	}
	if v.gen == c.gen {
		return v // compiled or reused earlier in this compile
	}
	if v.limited {
		return nil
	}
	v.gen = c.gen
	c.used.vhosts++
	c.reused = append(c.reused, v) // its rules are marked by finish, if need be
	return v
}

// finish leaves the pool holding what the router uses. When every virtual
// host of the last compile was reused and neither compile had backends
// outside virtual hosts, nothing the last router used was left: what the
// pool holds is all in use, and the reused hosts' rules, backends and
// upstreams are neither marked nor swept (a reload that adds routes).
// Otherwise the reused hosts' rules are marked, then the pool is swept.
func (c *compiler) finish() {
	p := c.pool
	if len(c.reused) == c.lastVHosts && c.others == 0 && p.others == 0 {
		p.gen = c.gen
		clear(p.dropped)
		p.dropped = p.dropped[:0]
		return
	}
	for _, v := range c.reused {
		for _, rr := range v.rules {
			c.markRule(rr)
		}
	}
	p.sweep(c.gen, c.used)
	p.others = c.others
}

// poolUse counts what one compile marked as used, each once: when a map
// of the pool holds as many entries, none is left to sweep.
type poolUse struct {
	rules, vhosts, upstreams, budgets int
}

// sweep forgets what the compile of generation gen did not use (used
// counts what it did), and lists the upstreams it dropped in p.dropped
// (their idle connections are closed once the new router serves). A map
// holding only what was used is not walked: a reload that only adds or
// keeps routes walks none.
func (p *upstreamPool) sweep(gen uint64, used poolUse) {
	p.gen = gen
	if len(p.rules) != used.rules {
		for r, rr := range p.rules {
			if rr.gen != gen {
				delete(p.rules, r)
			}
		}
	}
	if len(p.vhosts) != used.vhosts {
		for name, v := range p.vhosts {
			if v.gen != gen {
				delete(p.vhosts, name)
			}
		}
	}
	clear(p.dropped) // the last compile's, closed by now
	p.dropped = p.dropped[:0]
	if len(p.upstreams) != used.upstreams {
		for k, u := range p.upstreams {
			if u.gen != gen {
				delete(p.upstreams, k)
				p.dropped = append(p.dropped, u)
			}
		}
	}
	if len(p.budgets) != used.budgets {
		for k, b := range p.budgets {
			if b.gen != gen {
				delete(p.budgets, k)
			}
		}
	}
}
