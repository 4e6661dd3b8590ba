package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	networkingv1 "k8s.io/api/networking/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
)

// ingressClass is one IngressClass the routing table serves (the ingress
// front end's entry): its table entry and the Ingresses its rules come
// from, in the snapshot's order.
type ingressClass struct {
	table     *engine.GatewayTable
	ingresses []*networkingv1.Ingress
}

// ingressClasses are the table's IngressClass entries, each with the
// Ingresses it serves.
func ingressClasses(res *engine.Result) []ingressClass {
	if res == nil || res.Table == nil {
		return nil
	}
	var out []ingressClass
	for _, g := range res.Table.Gateways {
		if g.Gateway.Kind != "IngressClass" {
			continue
		}
		served := map[engine.ObjectKey]bool{}
		for _, p := range g.Ports {
			for _, l := range p.Listeners {
				for _, vh := range l.VirtualHosts {
					for _, r := range vh.Rules {
						served[r.Route] = true
					}
				}
			}
		}
		c := ingressClass{table: g}
		for _, ing := range res.Objects.Ingresses {
			if served[engine.ObjectKey{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}] {
				c.ingresses = append(c.ingresses, ing)
			}
		}
		out = append(out, c)
	}
	return out
}

// eachIngress calls fn for every Ingress of the result, with the
// IngressClass serving it.
func eachIngress(res *engine.Result, fn func(routeObject)) {
	by := map[engine.ObjectKey]*engine.GatewayTable{}
	for _, c := range ingressClasses(res) {
		for _, ing := range c.ingresses {
			by[engine.ObjectKey{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}] = c.table
		}
	}
	for _, ing := range res.Objects.Ingresses {
		k := engine.ObjectKey{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}
		var hosts []gwv1.Hostname
		for _, r := range ing.Spec.Rules {
			if r.Host != "" && !slices.Contains(hosts, gwv1.Hostname(r.Host)) {
				hosts = append(hosts, gwv1.Hostname(r.Host))
			}
		}
		fn(routeObject{key: k, hostnames: hosts, servedBy: by[k]})
	}
}

// ingressCounts are the summary's Ingress part: the Ingresses served and
// the listeners serving them ("" when there is no Ingress).
func ingressCounts(res *engine.Result) string {
	if len(res.Objects.Ingresses) == 0 {
		return ""
	}
	served, listeners := 0, 0
	for _, c := range ingressClasses(res) {
		served += len(c.ingresses)
		for _, p := range c.table.Ports {
			listeners += len(p.Listeners)
		}
	}
	s := plural(len(res.Objects.Ingresses), "Ingress") + " on " + plural(listeners, "listener")
	if n := len(res.Objects.Ingresses) - served; n > 0 {
		s += fmt.Sprintf(" (%d not served)", n)
	}
	return s
}

// ingress renders the overview's Ingress blocks: each IngressClass served
// as ingress-nginx would, with where each port is served (and why it
// moved), its listeners with their hosts, and each Ingress's hosts and
// paths as URLs. Lines a user types from wrap rather than being cut off.
func (v *overviewView) ingress(res *engine.Result) []string {
	st := v.st
	var lines []string
	for _, c := range ingressClasses(res) {
		g := c.table
		title := st.Title.Render("IngressClass "+g.Gateway.Name) + "  " + st.Dim.Render("(ingress-nginx)") + "  " + g.Address +
			"  " + st.Dim.Render(plural(len(c.ingresses), "Ingress"))
		if v.s.isChanged(g.Gateway) {
			title = st.Changed.Render("✱") + " " + title
		}
		lines = append(lines, "", title)
		for _, p := range g.Ports {
			r, ok := v.s.portReport(g.Name, p.Port)
			lines = append(lines, v.wrapLine(v.portLine(p.Port, r, ok), 13)...)
		}
		rows := [][]string{{st.Dim.Render("LISTENER"), st.Dim.Render("PROTO"), st.Dim.Render("PORT"), st.Dim.Render("HOSTS")}}
		for _, p := range g.Ports {
			for _, l := range p.Listeners {
				var hosts []string
				for _, vh := range l.VirtualHosts {
					hosts = append(hosts, hostOrAnyName(vh.Hostname))
				}
				rows = append(rows, []string{l.SectionName, string(l.Protocol), strconv.Itoa(int(p.Port)), strings.Join(hosts, " ")})
			}
		}
		for i, row := range alignRows("  ", rows) {
			// Hosts wrap under the HOSTS column.
			hang := ansiWidth(row) - ansiWidth(rows[i][len(rows[i])-1])
			lines = append(lines, v.wrapLine(row, hang)...)
		}
		for _, ing := range c.ingresses {
			k := engine.ObjectKey{Kind: "Ingress", Namespace: ing.Namespace, Name: ing.Name}
			line := "  " + st.Bold.Render("Ingress "+ing.Namespace+"/"+ing.Name) + "  " + strings.Join(ingressURLs(ing), "  ")
			if v.s.isChanged(k) {
				line = st.Changed.Render("✱") + line[1:]
			}
			lines = append(lines, v.wrapLine(line, 4)...)
		}
	}
	return lines
}

// portLine is where a port is served: the bound address, with why it moved
// when the port itself could not be bound.
func (v *overviewView) portLine(port int32, p emulator.PortReport, ok bool) string {
	st := v.st
	head := fmt.Sprintf("  port %-5s ", strconv.Itoa(int(port)))
	switch {
	case !ok:
		return head + st.Dim.Render("not served: no valid listener")
	case p.Error != "":
		return head + st.Error.Render("✗ not served: "+p.Error)
	case p.NotServed != "":
		return head + st.Warning.Render("- "+p.NotServed)
	case p.Fallback:
		return head + "→ " + st.Bold.Render(p.Bound) + st.Dim.Render("  "+movedWhy(port, p))
	}
	return head + "→ " + st.Bold.Render(p.Bound)
}

// movedWhy says why a port is served on another one: "(80 could not be
// bound: in use by another process; --port-offset)".
func movedWhy(port int32, p emulator.PortReport) string {
	why := ""
	if p.Moved != "" {
		why = " " + p.Moved + ";"
	}
	return fmt.Sprintf("(%d could not be bound:%s --port-offset)", port, why)
}

// wrapLine wraps a line to the view's width, continuation lines indented
// by hang.
func (v *overviewView) wrapLine(s string, hang int) []string { return wrapHanging(s, v.w, hang) }

// ingressURLs are an Ingress's hosts and paths as host+path ("*" for any
// host, "default backend" for spec.defaultBackend alone).
func ingressURLs(ing *networkingv1.Ingress) []string {
	var out []string
	for _, r := range ing.Spec.Rules {
		host := hostOrAnyName(r.Host)
		if r.HTTP == nil || len(r.HTTP.Paths) == 0 {
			out = append(out, host)
			continue
		}
		for _, p := range r.HTTP.Paths {
			out = append(out, host+p.Path)
		}
	}
	if len(out) == 0 && ing.Spec.DefaultBackend != nil {
		out = append(out, "default backend")
	}
	return out
}

// hostOrAnyName is a hostname, "*" for any.
func hostOrAnyName(h string) string {
	if h == "" {
		return "*"
	}
	return h
}
