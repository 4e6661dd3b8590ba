package engine

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// Graph is the structure of a translation for drawing: Gateways (and
// ListenerSets) → listeners → routes → rules → backends, each node marked
// healthy or not with the reason, and the policies (GEP-713), each with a
// policy edge to what it targets (policy_graph.go). Routes that are not accepted appear with
// a failed edge to the listener or Gateway they tried; what is served comes
// from the routing table. Nodes are in a stable order (Gateways by
// namespace/name, listeners in spec order, routes and rules in the order
// they are reached, policies last in the registry's order), edges in the
// order they were found.
type Graph struct {
	Nodes []*GraphNode `json:"nodes"`
	Edges []GraphEdge  `json:"edges"`
}

// GraphNode is one element of the graph.
type GraphNode struct {
	// ID is stable and unique: "gateway/<ns>/<name>", its listeners'
	// table names, "<kind>/<ns>/<name>" in lower case for routes, rule names
	// "<kind>/<ns>/<name>/rule/<i>", "service/<ns>/<name>:<port>".
	ID string `json:"id"`
	// Kind is Gateway, ListenerSet, Listener, a route kind, Rule, Service,
	// or a policy kind ("BackendTLSPolicy"; ID "<kind>/<ns>/<name>" in
	// lower case, as routes).
	Kind string `json:"kind"`
	// Label names the node for people; Detail adds a second line ("" :
	// none).
	Label  string `json:"label"`
	Detail string `json:"detail,omitempty"`
	// Filters are a rule's filters in order, each as DescribeFilter says it
	// (nil: none, or not a rule).
	Filters []string `json:"filters,omitempty"`
	// Problem says what is wrong ("" : accepted, programmed, resolved and,
	// for rules, reachable).
	Problem string `json:"problem,omitempty"`
	// Object is the manifest the node comes from: the Gateway, ListenerSet,
	// route, Service or policy itself, a listener's owner, a rule's route.
	Object ObjectKey `json:"object"`
	// Policy is set on a policy's node (false: any other). Its Detail says
	// what the policy does where it applies; Problem names the first
	// target it does not apply to, with the reason (TargetNotFound,
	// Conflicted, Invalid…).
	Policy bool `json:"policy,omitempty"`
}

// GraphEdge links a parent to a child. Problem is set on a route's edge to
// a parent with a problem condition for it; Refused says the parent did not
// accept the route (Accepted is not True), while an accepted route with a
// problem (a reference that does not resolve) still serves through it.
// Policy is set on an edge from a policy to a target it names (Label: the
// sectionName when no node of its own stands for the section); Refused,
// with the reason in Problem, when the policy does not apply there.
type GraphEdge struct {
	From    string `json:"from"`
	To      string `json:"to"`
	Label   string `json:"label,omitempty"`
	Problem string `json:"problem,omitempty"`
	Refused bool   `json:"refused,omitempty"`
	Policy  bool   `json:"policy,omitempty"`
}

// Children returns the nodes an edge leads to from id, in edge order, with
// the edges.
func (g *Graph) Children(id string) []GraphEdge {
	var out []GraphEdge
	for _, e := range g.Edges {
		if e.From == id {
			out = append(out, e)
		}
	}
	return out
}

// Node returns the node with this ID (nil: none).
func (g *Graph) Node(id string) *GraphNode {
	for _, n := range g.Nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// Roots are the nodes no edge but a policy's leads to, where every walk
// starts: the Gateways, routes or ListenerSets whose parent does not
// exist, and the policies.
func (g *Graph) Roots() []*GraphNode {
	to := map[string]bool{}
	for _, e := range g.Edges {
		if !e.Policy {
			to[e.To] = true
		}
	}
	var out []*GraphNode
	for _, n := range g.Nodes {
		if !to[n.ID] {
			out = append(out, n)
		}
	}
	return out
}

// graphBuilder collects nodes once by ID.
type graphBuilder struct {
	g     *Graph
	nodes map[string]*GraphNode
	edges map[string]bool
}

func (b *graphBuilder) node(n *GraphNode) *GraphNode {
	if old := b.nodes[n.ID]; old != nil {
		return old
	}
	b.nodes[n.ID] = n
	b.g.Nodes = append(b.g.Nodes, n)
	return n
}

func (b *graphBuilder) edge(e GraphEdge) {
	k := e.From + "\x00" + e.To
	if b.edges[k] {
		return
	}
	b.edges[k] = true
	b.g.Edges = append(b.g.Edges, e)
}

// Graph builds the drawing structure of the result.
func (r *Result) Graph() *Graph {
	b := &graphBuilder{g: &Graph{Nodes: []*GraphNode{}, Edges: []GraphEdge{}}, nodes: map[string]*GraphNode{}, edges: map[string]bool{}}
	if r.Objects == nil {
		return b.g
	}
	addrs := map[ObjectKey]string{}
	if r.Table != nil {
		for _, gt := range r.Table.Gateways {
			addrs[gt.Gateway] = gt.Address
		}
	}
	for _, gw := range r.Objects.Gateways {
		k := ObjectKey{Kind: "Gateway", Namespace: gw.Namespace, Name: gw.Name}
		detail := "class " + string(gw.Spec.GatewayClassName)
		if a := addrs[k]; a != "" {
			detail += ", " + a
		}
		gid := graphID(k)
		b.node(&GraphNode{ID: gid, Kind: "Gateway", Label: "Gateway " + gw.Namespace + "/" + gw.Name, Detail: detail,
			Problem: conditionProblem(gw.Status.Conditions), Object: k})
		b.listeners(gid, k, gw.Spec.Listeners, gw.Status.Listeners)
	}
	for _, ls := range r.Objects.ListenerSets {
		k := ObjectKey{Kind: "ListenerSet", Namespace: ls.Namespace, Name: ls.Name}
		id := graphID(k)
		ns := ls.Namespace
		if ls.Spec.ParentRef.Namespace != nil {
			ns = string(*ls.Spec.ParentRef.Namespace)
		}
		b.node(&GraphNode{ID: id, Kind: "ListenerSet", Label: "ListenerSet " + ls.Namespace + "/" + ls.Name,
			Problem: conditionProblem(ls.Status.Conditions), Object: k})
		if parent := graphID(ObjectKey{Kind: "Gateway", Namespace: ns, Name: string(ls.Spec.ParentRef.Name)}); b.nodes[parent] != nil {
			lsProblem := conditionProblem(ls.Status.Conditions)
			b.edge(GraphEdge{From: parent, To: id, Problem: lsProblem,
				Refused: lsProblem != "" && !meta.IsStatusConditionTrue(ls.Status.Conditions, "Accepted")})
		}
		specs := make([]gwv1.Listener, 0, len(ls.Spec.Listeners))
		for _, l := range ls.Spec.Listeners {
			specs = append(specs, gwv1.Listener{Name: l.Name, Hostname: l.Hostname, Port: l.Port, Protocol: l.Protocol})
		}
		statuses := make([]gwv1.ListenerStatus, 0, len(ls.Status.Listeners))
		for _, s := range ls.Status.Listeners {
			statuses = append(statuses, gwv1.ListenerStatus{Name: s.Name, Conditions: s.Conditions})
		}
		b.listeners(id, k, specs, statuses)
	}
	b.meshFrontends(r) // mesh_graph.go
	b.routes(r)
	b.ingressClasses(r) // frontend_graph.go
	b.policies(r)       // policy_graph.go
	return b.g
}

func graphID(k ObjectKey) string { return strings.ToLower(k.Kind) + "/" + k.Namespace + "/" + k.Name }

// listeners adds an owner's listeners with their status.
func (b *graphBuilder) listeners(owner string, k ObjectKey, specs []gwv1.Listener, statuses []gwv1.ListenerStatus) {
	for _, l := range specs {
		var conds []metav1.Condition
		for _, s := range statuses {
			if s.Name == l.Name {
				conds = s.Conditions
			}
		}
		host := "*"
		if l.Hostname != nil {
			host = string(*l.Hostname)
		}
		id := owner + "/listener/" + string(l.Name)
		b.node(&GraphNode{ID: id, Kind: "Listener", Label: "listener " + string(l.Name),
			Detail: fmt.Sprintf("%s :%d %s", l.Protocol, l.Port, host), Problem: conditionProblem(conds), Object: k})
		b.edge(GraphEdge{From: owner, To: id})
	}
}

// conditionProblem renders the first problem condition, e.g.
// "Accepted=False (NotAllowedByListeners)" ("" : none).
func conditionProblem(conds []metav1.Condition) string {
	for _, c := range conds {
		if ConditionIsProblem(c.Type, string(c.Status)) {
			return c.Type + "=" + string(c.Status) + " (" + c.Reason + ")"
		}
	}
	return ""
}

// routes adds every route with parent status, its edges from listeners,
// and, from the table, its rules and backends.
func (b *graphBuilder) routes(r *Result) {
	attached := map[string]map[string][]string{} // route ID → owner ID → listener IDs
	rules := map[string][]*tableRule{}           // route ID → rules in table order
	shadowed := map[*RouteRule]bool{}
	for _, s := range r.Shadows() {
		shadowed[s.Loser] = true
	}
	EachListener(r.Table, func(l *ListenerTable) {
		owner := graphID(l.Owner)
		attach := func(route ObjectKey, rule *tableRule) {
			id := graphID(route)
			if attached[id] == nil {
				attached[id] = map[string][]string{}
			}
			if ls := attached[id][owner]; len(ls) == 0 || ls[len(ls)-1] != l.Name {
				attached[id][owner] = append(ls, l.Name)
			}
			for _, old := range rules[id] {
				if old.name == rule.name {
					old.merge(rule)
					return
				}
			}
			rules[id] = append(rules[id], rule)
		}
		for _, vh := range l.VirtualHosts {
			for _, rr := range vh.Rules {
				base, _, _ := strings.Cut(rr.Name, "/match/")
				attach(rr.Route, &tableRule{name: base, ruleName: rr.RuleName, matches: []*RouteRule{rr}, shadowed: map[*RouteRule]bool{rr: shadowed[rr]},
					backends: rr.Backends, direct: rr.DirectReason})
			}
		}
		for _, sr := range l.TLSRoutes {
			attach(sr.Route, &tableRule{name: sr.Name, hosts: sr.Hostnames, backends: sr.Backends})
		}
		for _, st := range l.StreamRoutes {
			attach(st.Route, &tableRule{name: st.Name, backends: st.Backends})
		}
	})
	r.Objects.Each(func(k ObjectKey, o metav1.Object) {
		if !strings.HasSuffix(k.Kind, "Route") {
			return // only routes have status.parents
		}
		parents := routeParents(o)
		if parents == nil {
			return
		}
		id := graphID(k)
		route := &GraphNode{ID: id, Kind: k.Kind, Label: k.Kind + " " + k.Namespace + "/" + k.Name, Object: k}
		b.node(route)
		for _, p := range parents {
			problem := conditionProblem(p.Conditions)
			refused := problem != "" && !meta.IsStatusConditionTrue(p.Conditions, "Accepted")
			if problem != "" && route.Problem == "" {
				route.Problem = problem
			}
			ref := p.ParentRef
			kind, ns := "Gateway", k.Namespace
			if ref.Kind != nil {
				kind = string(*ref.Kind)
			}
			if ref.Namespace != nil {
				ns = string(*ref.Namespace)
			}
			owner := graphID(ObjectKey{Kind: kind, Namespace: ns, Name: string(ref.Name)})
			froms := attached[id][owner]
			if ref.SectionName != nil {
				froms = []string{owner + "/listener/" + string(*ref.SectionName)}
			}
			if len(froms) == 0 {
				froms = []string{owner}
			}
			for _, from := range froms {
				if b.nodes[from] == nil {
					from = owner // a sectionName no listener has
				}
				if b.nodes[from] != nil {
					b.edge(GraphEdge{From: from, To: id, Problem: problem, Refused: refused})
				}
			}
		}
		rs := rules[id]
		sort.SliceStable(rs, func(i, j int) bool { // spec order, not precedence order
			a, _ := ruleIndexes(rs[i].name + "/match/0")
			c, _ := ruleIndexes(rs[j].name + "/match/0")
			return a < c
		})
		for _, tr := range rs {
			b.rule(id, k, tr)
		}
	})
}

// routeParents reads status.parents of a route of any kind (nil: the
// object is not a route, or no parent has status). Every route type has
// Status.RouteStatus.Parents; reflection finds it without a list of kinds.
func routeParents(o metav1.Object) []gwv1.RouteParentStatus {
	v := reflect.ValueOf(o)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	st := v.Elem().FieldByName("Status")
	if !st.IsValid() || st.Kind() != reflect.Struct {
		return nil
	}
	ps := st.FieldByName("Parents")
	if !ps.IsValid() {
		return nil
	}
	parents, _ := ps.Interface().([]gwv1.RouteParentStatus)
	return parents
}

// tableRule is one route rule as the table serves it, its matches merged
// across listeners and hostnames.
type tableRule struct {
	name, ruleName string
	matches        []*RouteRule
	shadowed       map[*RouteRule]bool
	hosts          []string
	backends       []*Backend
	direct         string
}

func (t *tableRule) merge(o *tableRule) {
	for _, m := range o.matches {
		found := false
		for _, have := range t.matches {
			if have.Name == m.Name {
				found = true
				// Reachable anywhere counts as reachable.
				t.shadowed[have] = t.shadowed[have] && o.shadowed[m]
			}
		}
		if !found {
			t.matches = append(t.matches, m)
			t.shadowed[m] = o.shadowed[m]
		}
	}
	for _, h := range o.hosts {
		if !contains(t.hosts, h) {
			t.hosts = append(t.hosts, h)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// rule adds a rule node and its backends.
func (b *graphBuilder) rule(route string, k ObjectKey, tr *tableRule) {
	i, _ := ruleIndexes(tr.name + "/match/0")
	label := fmt.Sprintf("rule %d", i)
	if tr.ruleName != "" {
		label += " " + tr.ruleName
	}
	var matches []string
	allShadowed := len(tr.matches) > 0
	for _, m := range tr.matches {
		matches = append(matches, describeMatch(m, nil))
		allShadowed = allShadowed && tr.shadowed[m]
	}
	detail := strings.Join(matches, " | ")
	if len(tr.hosts) > 0 {
		detail = "SNI " + strings.Join(tr.hosts, ", ")
	}
	n := &GraphNode{ID: tr.name, Kind: "Rule", Label: label, Detail: detail, Object: k}
	if len(tr.matches) > 0 { // the rule's filters, as its first match has them resolved
		m := tr.matches[0]
		for _, f := range m.Filters {
			n.Filters = append(n.Filters, DescribeFilter(f, m.Mirrors))
		}
	}
	switch {
	case allShadowed:
		n.Problem = "shadowed: never matches (see gwdev check)"
	case tr.direct != "":
		n.Problem = tr.direct
	}
	b.node(n)
	b.edge(GraphEdge{From: route, To: tr.name})
	b.backends(tr.name, tr.backends)
}

// backends adds the Service nodes of a rule's backends and the edges to
// them, weighted when there are several.
func (b *graphBuilder) backends(rule string, bs []*Backend) {
	for _, be := range bs {
		id := backendNodeID(be.Service, be.Port)
		bn := &GraphNode{ID: id, Kind: "Service", Label: fmt.Sprintf("Service %s/%s:%d", be.Service.Namespace, be.Service.Name, be.Port),
			Object: be.Service}
		switch {
		case be.Invalid != "":
			bn.Problem = be.Invalid // the first reference decides; every invalid edge says why too
		case be.Target != nil:
			bn.Detail = be.Target.Kind
		}
		b.node(bn)
		label := ""
		if len(bs) > 1 {
			label = fmt.Sprintf("weight %d", be.Weight)
		}
		b.edge(GraphEdge{From: rule, To: id, Label: label, Problem: be.Invalid})
	}
}

// EachListener calls fn for every listener of the table, Gateway by
// Gateway and port by port.
func EachListener(t *Table, fn func(*ListenerTable)) {
	if t == nil {
		return
	}
	for _, g := range t.Gateways {
		for _, p := range g.Ports {
			for _, l := range p.Listeners {
				fn(l)
			}
		}
	}
}
