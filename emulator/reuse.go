package emulator

import "github.com/gwdev/gwdev/engine/table"

// Reuse between compiles: the engine hands an unchanged route's rules to
// the next table as the same *table.RouteRule values (engine/incremental.go)
// and never edits a table it has returned, so a rule pointer the last
// router compiled stands for the same rule. compile then takes the last
// router's ruleRoutes for it instead of compiling it again, and the last
// virtual host whose name, hostname and rules (by pointer) are the same;
// the upstreams and retry budgets they hold are carried into the new pool,
// as compiling them would have fetched them from it. Routers share what
// they reuse; nothing in a compiled rule or virtual host is written after
// compile, so requests in flight on the old router are not affected.

// reuseRule returns the last router's compiled r, registered in this
// compile (nil: none, or a rule with a rate limit, whose counters each
// compile starts afresh for all the rules sharing it).
func (c *compiler) reuseRule(r *table.RouteRule) *ruleRoutes {
	rr := c.pool.rules[r]
	if rr == nil || rr.limiter != nil {
		return nil
	}
	c.rules[r] = rr
	for _, b := range rr.backends {
		c.adoptBackend(b)
	}
	for _, b := range rr.mirrors {
		c.adoptBackend(b)
	}
	c.adoptAuths(rr.auths)
	if rr.errorPages != nil && rr.errorPages.backend != nil {
		c.adoptBackend(rr.errorPages.backend)
	}
	return rr
}

// adoptBackend registers a reused backend, its upstream and retry budget
// (and those of its mirrors and auth backends) in this compile.
func (c *compiler) adoptBackend(br *backendRoutes) {
	if br == nil {
		return
	}
	if _, ok := c.backends[br.b]; ok {
		return
	}
	c.backends[br.b] = br
	if u := br.up; u != nil {
		if _, ok := c.next[u.key]; !ok {
			c.next[u.key] = u
		}
	}
	if b := br.budget; b != nil {
		if c.budgets == nil {
			c.budgets = map[string]*retryBudget{}
		}
		k := budgetKey(&b.spec)
		if _, ok := c.budgets[k]; !ok {
			c.budgets[k] = b
		}
	}
	for _, m := range br.mirrors {
		c.adoptBackend(m)
	}
	c.adoptAuths(br.auths)
}

func (c *compiler) adoptAuths(as []*extAuthRoutes) {
	for _, a := range as {
		if a != nil {
			c.adoptBackend(a.backend)
		}
	}
}

// reuseVHost returns the last router's virtual host of vh's name when it
// has vh's hostname and rules, its rules registered in this compile (nil:
// none).
func (c *compiler) reuseVHost(vh *table.VirtualHost) *vhostRoutes {
	v := c.pool.vhosts[vh.Name]
	if v == nil || v.vh.Hostname != vh.Hostname || len(v.vh.Rules) != len(vh.Rules) {
		return nil
	}
	for i, r := range vh.Rules {
		if v.vh.Rules[i] != r {
			return nil
		}
	}
	j := 0
	for _, r := range vh.Rules {
		if r == nil {
			continue
		}
		if j >= len(v.rules) || c.rule(r) != v.rules[j] {
			return nil // a rule compiled afresh (a rate limit)
		}
		j++
	}
	c.vhosts[vh.Name] = v
	return v
}
