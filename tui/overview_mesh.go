package tui

import (
	"fmt"
	"strconv"

	"github.com/gwdev/gwdev/engine"
)

// mesh renders the overview's mesh block: each Service frontend gwdev
// serves for routes whose parent is a Service (from the routing table:
// what is bound), with where each port is served and whose requests it
// takes, then how many mesh routes each Service has.
func (v *overviewView) mesh(res *engine.Result) []string {
	st := v.st
	var lines []string
	for _, g := range res.Table.Gateways {
		if g.Mesh == nil {
			continue
		}
		svc := g.Mesh.Service
		who := "every client namespace without consumer routes"
		if g.Mesh.ClientNamespace != "" {
			who = "clients in namespace " + g.Mesh.ClientNamespace + " (consumer routes)"
		}
		title := st.Title.Render("Mesh Service "+svc.Namespace+"/"+svc.Name) + "  " + g.Address + "  " + st.Dim.Render("for "+who)
		if v.s.isChanged(svc) {
			title = st.Changed.Render("✱") + " " + title
		}
		lines = append(lines, "", title)
		for _, p := range g.Ports {
			head := fmt.Sprintf("  port %-5s ", strconv.Itoa(int(p.Port)))
			proto, rules := "", 0
			if len(p.Listeners) > 0 {
				l := p.Listeners[0]
				proto = string(l.Protocol)
				for _, vh := range l.VirtualHosts {
					rules += len(vh.Rules)
				}
			}
			what := st.Dim.Render(fmt.Sprintf("  %s, %s", proto, plural(rules, "rule")))
			r, ok := v.s.portReport(g.Name, p.Port)
			switch {
			case !ok:
				lines = append(lines, head+st.Dim.Render("not served yet")+what)
			case r.Error != "":
				lines = append(lines, head+st.Error.Render("✗ not served: "+r.Error)+what)
			case r.NotServed != "":
				lines = append(lines, head+st.Warning.Render("- "+r.NotServed)+what)
			default:
				lines = append(lines, head+"→ "+st.Bold.Render(r.Bound)+what)
			}
		}
	}
	return lines
}
