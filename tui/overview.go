package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/viewport"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/report"
)

// overviewView shows every Gateway with its addresses, port mappings and
// listeners (conditions as badges), conflicted listeners grouped by the
// rule they break, and ListenerSets under their parent.
type overviewView struct {
	viewBase
	vp viewport.Model
}

func newOverviewView(c *common) *overviewView {
	v := &overviewView{vp: viewport.New(0, 0)}
	v.viewBase = newPageBase(c, &v.vp, v.rebuild, v.rebuild)
	return v
}

func (v *overviewView) title() string { return "Overview" }

func (v *overviewView) position() string { return "" }

func (v *overviewView) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case refreshMsg:
		v.rebuild()
	case tea.KeyMsg:
		scrollViewport(&v.vp, v.keys, msg)
	}
	return v, nil
}

func (v *overviewView) View() string { return v.vp.View() }

func (v *overviewView) ShortHelp() []key.Binding {
	return []key.Binding{v.keys.Up, v.keys.Down}
}

func (v *overviewView) FullHelp() [][]key.Binding {
	return [][]key.Binding{v.keys.moves()}
}

// scrollViewport moves a viewport with the dashboard's movement keys.
func scrollViewport(vp *viewport.Model, k *keyMap, msg tea.KeyMsg) bool {
	switch {
	case key.Matches(msg, k.Up):
		vp.ScrollUp(1)
	case key.Matches(msg, k.Down):
		vp.ScrollDown(1)
	case key.Matches(msg, k.PageUp):
		vp.PageUp()
	case key.Matches(msg, k.PageDown):
		vp.PageDown()
	case key.Matches(msg, k.Top):
		vp.GotoTop()
	case key.Matches(msg, k.Bottom):
		vp.GotoBottom()
	default:
		return false
	}
	return true
}

// rebuild renders the whole overview; it runs on reloads, resizes and
// filter changes, not on key presses.
func (v *overviewView) rebuild() {
	if v.w <= 0 {
		return
	}
	res := v.s.result()
	if res == nil {
		v.vp.SetContent(v.st.Dim.Render("Loading " + v.s.dir + "…"))
		return
	}
	snap := res.Objects
	lines := []string{v.summary(res)}
	if v.s.admin != "" {
		// The admin address is typed: wrapped, never cut off.
		if v.s.adminProblem {
			lines = append(lines, v.wrapLine(v.st.Warning.Render("! "+v.s.admin), 2)...)
		} else {
			lines = append(lines, v.wrapLine(v.st.Dim.Render(v.s.admin), 2)...)
		}
	}
	meshLines := v.mesh(res)                         // overview_mesh.go
	meshLines = append(meshLines, v.ingress(res)...) // overview_ingress.go
	if len(snap.Gateways) == 0 && len(meshLines) == 0 {
		lines = append(lines, "", "No Gateway in "+v.s.dir+": add one (see samples/basic) to serve routes.")
	}
	sets := map[engine.ObjectKey][]*gwv1.ListenerSet{}
	for _, ls := range snap.ListenerSets {
		ns := ls.Namespace
		if ls.Spec.ParentRef.Namespace != nil {
			ns = string(*ls.Spec.ParentRef.Namespace)
		}
		pk := engine.ObjectKey{Kind: "Gateway", Namespace: ns, Name: string(ls.Spec.ParentRef.Name)}
		sets[pk] = append(sets[pk], ls)
	}
	shown := 0
	for _, g := range snap.Gateways {
		gk := engine.ObjectKey{Kind: "Gateway", Namespace: g.Namespace, Name: g.Name}
		block := v.gateway(g, gk, sets[gk])
		if v.filter != "" && !strings.Contains(strings.ToLower(ansi.Strip(strings.Join(block, "\n"))), v.filter) {
			continue
		}
		shown++
		lines = append(lines, "")
		lines = append(lines, block...)
	}
	if v.filter == "" || strings.Contains(strings.ToLower(ansi.Strip(strings.Join(meshLines, "\n"))), v.filter) {
		lines = append(lines, meshLines...)
		shown += len(meshLines)
	}
	if v.filter != "" && shown == 0 {
		lines = append(lines, "", "No Gateway matches the filter.")
	}
	for i := range lines {
		lines[i] = truncate(lines[i], v.w)
	}
	v.vp.SetContent(strings.Join(lines, "\n"))
}

// summary is the first line: how many gateways, listeners and routes, and
// how many of them are in trouble.
func (v *overviewView) summary(res *engine.Result) string {
	snap := res.Objects
	listeners, bad := 0, 0
	for _, g := range snap.Gateways {
		for _, l := range g.Status.Listeners {
			listeners++
			if !listenerOK(l.Conditions) {
				bad++
			}
		}
	}
	for _, ls := range snap.ListenerSets {
		for _, l := range ls.Status.Listeners {
			listeners++
			if !listenerOK(l.Conditions) {
				bad++
			}
		}
	}
	routes, rejected := 0, 0
	eachRoute(snap, func(r routeObject) {
		routes++
		for _, p := range r.parents {
			if c := meta(p.Conditions, "Accepted"); c == nil || isProblem(*c) {
				rejected++
				break
			}
		}
	})
	st := v.st
	parts := []string{plural(len(snap.Gateways), "Gateway")}
	if len(snap.ListenerSets) > 0 {
		parts = append(parts, plural(len(snap.ListenerSets), "ListenerSet"))
	}
	l := plural(listeners, "listener")
	if bad > 0 {
		l += " " + st.Error.Render(fmt.Sprintf("(%d not served)", bad))
	}
	r := plural(routes, "route")
	if rejected > 0 {
		r += " " + st.Error.Render(fmt.Sprintf("(%d not accepted)", rejected))
	}
	parts = append(parts, l, r)
	if ing := ingressCounts(res); ing != "" { // overview_ingress.go
		if len(snap.Gateways) == 0 && routes == 0 {
			parts = nil // an Ingress-only folder: no "0 Gateways"
		}
		parts = append(parts, ing)
	}
	return strings.Join(parts, " · ")
}

// listenerInfo is one listener of a Gateway or ListenerSet, spec and status.
// listenerRef is one listener of a Gateway or ListenerSet.
type listenerRef struct {
	owner engine.ObjectKey
	name  string
}

type listenerInfo struct {
	name     string
	protocol string
	port     int32
	hostname string
	tls      string
	routes   int32
	conds    []metav1.Condition
}

func gatewayListeners(g *gwv1.Gateway) []listenerInfo {
	status := map[gwv1.SectionName]gwv1.ListenerStatus{}
	for _, s := range g.Status.Listeners {
		status[s.Name] = s
	}
	var out []listenerInfo
	for _, l := range g.Spec.Listeners {
		s := status[l.Name]
		out = append(out, listenerInfo{name: string(l.Name), protocol: string(l.Protocol), port: int32(l.Port),
			hostname: hostOrAny(l.Hostname), tls: tlsMode(l.TLS), routes: s.AttachedRoutes, conds: s.Conditions})
	}
	return out
}

func listenerSetListeners(ls *gwv1.ListenerSet) []listenerInfo {
	status := map[gwv1.SectionName]gwv1.ListenerEntryStatus{}
	for _, s := range ls.Status.Listeners {
		status[s.Name] = s
	}
	var out []listenerInfo
	for _, l := range ls.Spec.Listeners {
		s := status[l.Name]
		out = append(out, listenerInfo{name: string(l.Name), protocol: string(l.Protocol), port: int32(l.Port),
			hostname: hostOrAny(l.Hostname), tls: tlsMode(l.TLS), routes: s.AttachedRoutes, conds: s.Conditions})
	}
	return out
}

func hostOrAny(h *gwv1.Hostname) string {
	if h == nil || *h == "" {
		return "*"
	}
	return string(*h)
}

func tlsMode(t *gwv1.ListenerTLSConfig) string {
	switch {
	case t == nil:
		return "-"
	case t.Mode == nil:
		return string(gwv1.TLSModeTerminate)
	}
	return string(*t.Mode)
}

// listenerOK reports whether a listener is accepted, programmed and not
// conflicted.
func listenerOK(conds []metav1.Condition) bool {
	for _, c := range conds {
		if isProblem(c) {
			return false
		}
	}
	return true
}

// isProblem asks the engine whether a condition says something is wrong.
func isProblem(c metav1.Condition) bool { return engine.ConditionIsProblem(c.Type, string(c.Status)) }

func meta(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// badges renders conditions as coloured badges (report.ConditionBadge): ✓
// for good, ✗ for a failed positive condition, ! for a true negative one.
// Healthy negative conditions (Conflicted=False) are left out. Narrow screens get short
// names; wide ones the reason of every bad condition.
func (c *common) badges(conds []metav1.Condition, width int) string {
	var out []string
	for _, cond := range conds {
		b := report.ConditionBadge(cond)
		if b == report.BadgeHidden {
			continue
		}
		name := cond.Type
		if width < 100 {
			name = shortCondition(name)
		}
		switch b {
		case report.BadgeOK:
			out = append(out, c.st.OK.Render(b.Mark()+name))
		case report.BadgeRaised:
			out = append(out, c.st.Warning.Render(b.Mark()+name+c.reasonSuffix(cond, width)))
		default:
			out = append(out, c.st.Error.Render(b.Mark()+name+c.reasonSuffix(cond, width)))
		}
	}
	return strings.Join(out, " ")
}

func (c *common) reasonSuffix(cond metav1.Condition, width int) string {
	if width < 120 || cond.Reason == "" {
		return ""
	}
	return "(" + cond.Reason + ")"
}

func shortCondition(t string) string {
	switch t {
	case "Accepted":
		return "Acc"
	case "Programmed":
		return "Prog"
	case "ResolvedRefs":
		return "Refs"
	case "Conflicted":
		return "Conflict"
	case "OverlappingTLSConfig":
		return "Overlap"
	}
	return t
}

// gateway renders one Gateway block.
func (v *overviewView) gateway(g *gwv1.Gateway, gk engine.ObjectKey, sets []*gwv1.ListenerSet) []string {
	st := v.st
	var addrs []string
	for _, a := range g.Status.Addresses {
		addrs = append(addrs, a.Value)
	}
	addr := strings.Join(addrs, ",")
	if addr == "" {
		addr = st.Error.Render("no address")
	}
	title := st.Title.Render("Gateway "+g.Namespace+"/"+g.Name) + "  " + st.Dim.Render("class "+string(g.Spec.GatewayClassName)) +
		"  " + addr + "  " + v.badges(g.Status.Conditions, v.w)
	if src := v.s.state.Result.Objects.SourceOf(gk).String(); src != "" && v.w >= 100 {
		title += "  " + st.Dim.Render(src)
	}
	if v.s.isChanged(gk) {
		title = st.Changed.Render("✱") + " " + title
	}
	lines := []string{title}
	lines = append(lines, v.ports(g, gk)...)
	ls := gatewayListeners(g)
	lines = append(lines, v.listenerTable("  ", ls)...)
	lines = append(lines, v.conflicts("  ", gk, ls)...)
	for _, set := range sets {
		sk := engine.ObjectKey{Kind: "ListenerSet", Namespace: set.Namespace, Name: set.Name}
		t := "  " + st.Title.Render("ListenerSet "+set.Namespace+"/"+set.Name) + "  " + v.badges(set.Status.Conditions, v.w)
		if v.s.isChanged(sk) {
			t = st.Changed.Render("✱") + t[1:]
		}
		lines = append(lines, t)
		sl := listenerSetListeners(set)
		lines = append(lines, v.listenerTable("    ", sl)...)
		lines = append(lines, v.conflicts("    ", sk, sl)...)
	}
	return lines
}

// ports renders where each Gateway port is served.
func (v *overviewView) ports(g *gwv1.Gateway, gk engine.ObjectKey) []string {
	seen := map[int32]bool{}
	var ports []int32
	for _, l := range g.Spec.Listeners {
		if !seen[int32(l.Port)] {
			seen[int32(l.Port)] = true
			ports = append(ports, int32(l.Port))
		}
	}
	slices.Sort(ports)
	var out []string
	name := "gateway/" + gk.Namespace + "/" + gk.Name
	for _, port := range ports {
		p, ok := v.s.portReport(name, port)
		out = append(out, v.wrapLine(v.portLine(port, p, ok), 13)...) // overview_ingress.go
	}
	return out
}

// listenerTable renders the listeners that are not conflicted as aligned
// columns; conflicted ones are shown by conflicts.
func (v *overviewView) listenerTable(indent string, ls []listenerInfo) []string {
	var rows [][]string
	for _, l := range ls {
		if c := meta(l.conds, "Conflicted"); c != nil && report.ConditionBadge(*c) == report.BadgeRaised {
			continue
		}
		rows = append(rows, v.listenerCells(l))
	}
	if len(rows) == 0 {
		return nil
	}
	head := []string{"LISTENER", "PROTOCOL", "PORT", "HOSTNAME", "TLS", "ROUTES", "CONDITIONS"}
	if v.w < 100 {
		head = []string{"LISTENER", "PROTO", "PORT", "HOSTNAME", "ROUTES", "CONDITIONS"}
	}
	for i := range head {
		head[i] = v.st.Dim.Render(head[i])
	}
	return alignRows(indent, append([][]string{head}, rows...))
}

func (v *overviewView) listenerCells(l listenerInfo) []string {
	cells := []string{l.name, l.protocol, strconv.Itoa(int(l.port)), l.hostname, l.tls, strconv.Itoa(int(l.routes)), v.badges(l.conds, v.w)}
	if v.w < 100 {
		cells = append(cells[:4], cells[5:]...) // no TLS column
	}
	return cells
}

// conflicts groups the conflicted listeners of owner by port and reason,
// each group with the rule the listeners break and each listener with what
// it conflicts with (the engine's Finding.ConflictsWith).
func (v *overviewView) conflicts(indent string, owner engine.ObjectKey, ls []listenerInfo) []string {
	type group struct {
		port    int32
		reason  string
		members []listenerInfo
	}
	var groups []*group
	find := func(port int32, reason string) *group {
		for _, g := range groups {
			if g.port == port && g.reason == reason {
				return g
			}
		}
		g := &group{port: port, reason: reason}
		groups = append(groups, g)
		return g
	}
	for _, l := range ls {
		if c := meta(l.conds, "Conflicted"); c != nil && report.ConditionBadge(*c) == report.BadgeRaised {
			g := find(l.port, c.Reason)
			g.members = append(g.members, l)
		}
	}
	if len(groups) == 0 {
		return nil
	}
	st := v.st
	out := []string{indent + st.Error.Render("✗ Conflicted listeners (not served)")}
	for _, g := range groups {
		out = append(out, indent+"  "+st.Bold.Render(fmt.Sprintf("port %d · %s", g.port, g.reason))+st.Dim.Render(": "+engine.ConflictRule(g.reason)))
		var rows [][]string
		for _, l := range g.members {
			with := ""
			if peer := v.s.conflictsWith[listenerRef{owner, l.name}]; peer != "" {
				with = "↔ " + peer
			}
			rows = append(rows, []string{l.name, l.protocol, l.hostname, st.Dim.Render(with)})
		}
		out = append(out, alignRows(indent+"    ", rows)...)
	}
	return out
}

// alignRows lays cells out in columns two spaces apart.
func alignRows(indent string, rows [][]string) []string {
	var widths []int
	for _, r := range rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], ansiWidth(c))
		}
	}
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(fit(c, widths[i]))
			b.WriteString("  ")
		}
		out = append(out, b.String())
	}
	return out
}
