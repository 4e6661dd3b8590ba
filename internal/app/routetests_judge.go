package app

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/routetest"
)

// impossibleExpectations lists the expectations no request could meet on
// res, each at its file:line:column: a port no listener has (unless the
// case expects a refusal), a backend or mirror Service the folder does not
// have, a route that does not exist. `gwdev test` stops on them (exit 2):
// a typo is not a failure of the routing.
func impossibleExpectations(res *engine.Result, files []*routetest.File) routetest.Errors {
	ports := map[int32]bool{}
	for _, g := range res.Table.Gateways {
		for _, p := range g.Ports {
			ports[p.Port] = true
		}
	}
	services := map[string]bool{}
	routes := map[string]bool{}
	res.Objects.Each(func(k engine.ObjectKey, _ metav1.Object) {
		services[k.Namespace+"/"+k.Name] = true
	})
	res.Objects.EachRoute(func(r engine.Route) {
		k := r.Key()
		routes[k.Kind+"/"+k.Namespace+"/"+k.Name] = true
		routes["/"+k.Namespace+"/"+k.Name] = true
		routes["//"+k.Name] = true
		routes[k.Kind+"//"+k.Name] = true
		routes[k.Kind+"/"+k.Namespace+"/"] = true
	})
	var errs routetest.Errors
	for _, f := range files {
		for i := range f.Cases {
			c := &f.Cases[i]
			at := func(field, msg string) {
				line, col := c.Lines[field], c.Columns[field]
				if line == 0 {
					line, col = c.Line, c.Column
				}
				errs = append(errs, &routetest.Error{File: f.Path, Line: line, Column: col, Message: msg})
			}
			e := &c.Expect
			refused := e.Refused != nil && *e.Refused
			if p := urlPort(c.Request.URL); p > 0 && !ports[p] && !refused {
				at("request.url", fmt.Sprintf("no listener has port %d (listening: %s); a case that expects a refusal says refused: true", p, portList(ports)))
			}
			if b := e.Backend; b != nil && b.Service != "" {
				if name, _, _ := strings.Cut(b.Service, ":"); !services[name] {
					at("backend.service", "no Service "+name+" in the folder")
				}
			}
			for _, m := range e.Mirrors {
				if !services[m] {
					at("mirrors", "no Service "+m+" in the folder")
				}
			}
			if r := e.Route; r != nil && (r.Kind != "" || r.Namespace != "" || r.Name != "") {
				if key := r.Kind + "/" + r.Namespace + "/" + r.Name; !routes[key] && r.Name != "" {
					label := strings.TrimSpace(r.Kind + " " + strings.TrimPrefix(r.Namespace+"/"+r.Name, "/"))
					at("route", "no route "+label+" in the folder")
				}
			}
		}
	}
	return errs
}

// urlPort is the port of a test URL as explain reads it (0: none given,
// or not parsed: the request itself says why).
func urlPort(rawURL string) int32 {
	p, err := (&ProbeFlags{}).Probe(rawURL)
	if err != nil {
		return 0
	}
	return p.Port
}

func portList(ports map[int32]bool) string {
	var ps []int
	for p := range ports {
		ps = append(ps, int(p))
	}
	slices.Sort(ps)
	var out []string
	for _, p := range ps {
		out = append(out, strconv.Itoa(p))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}
