package app

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/internal/routetest"
	"github.com/gwdev/gwdev/watch"
)

// EmitMigrationTests writes the ingress-nginx side's answers as routing
// test cases (gwdev migrate --emit-tests): the requests migrate --compare
// generates from the Ingress rules (compareRequests), each sent through
// the folder served as ingress-nginx would serve it, and a case per
// request expecting what happened there — the status, a redirect's
// Location, the Service that answered and the path and Host it received,
// or the refusal. Run against the converted routes (the folder with the
// output of migrate instead of its Ingresses), the cases fail where the
// Gateway API side answers differently.
func EmitMigrationTests(ctx context.Context, dir string, flags project.Flags, proj *project.Project, lr *watch.LoadResult) (*routetest.File, error) {
	res := proj.Translate(lr.Snapshot, project.Translation{Now: metav1.NewTime(time.Now().UTC().Truncate(time.Second))})
	ing := &compareSide{addrs: map[string]string{}, tls: map[string]bool{}}
	ports := map[string][2]int32{} // class → HTTP and HTTPS port
	for _, g := range res.Table.Gateways {
		if g.Gateway.Kind != "IngressClass" {
			continue
		}
		ing.addrs[g.Name] = g.Address
		p := ports[g.Name]
		for _, pt := range g.Ports {
			for _, l := range pt.Listeners {
				switch {
				case l.Protocol == table.HTTPSProtocolType && p[1] == 0:
					p[1] = pt.Port
					ing.tls[g.Name] = true
				case l.Protocol == table.HTTPProtocolType && p[0] == 0:
					p[0] = pt.Port
				}
			}
		}
		ports[g.Name] = p
	}
	reqs := compareRequests(res.Objects, ing)
	if len(reqs) > MaxCompareRequests {
		reqs = reqs[:MaxCompareRequests]
	}
	f := &routetest.File{Path: "(emit-tests)"}
	for _, r := range reqs {
		scheme, port := "http", ports[r.Class][0]
		if r.HTTPS {
			scheme, port = "https", ports[r.Class][1]
		}
		c := routetest.Case{Request: routetest.Request{URL: scheme + "://" + net.JoinHostPort(r.Host, strconv.Itoa(int(port))) + r.Path}}
		if len(r.Headers) > 0 {
			c.Request.Headers = r.Headers
		}
		d := report.CompareDifference{Request: r}
		c.Name = d.RequestLine() + " (" + r.Ingress.String() + ")"
		f.Cases = append(f.Cases, c)
	}
	if len(f.Cases) == 0 {
		return nil, fmt.Errorf("%s: no Ingress rule served as ingress-nginx: no requests to record", dir)
	}
	run, err := runFiles(ctx, dir, flags, TestOptions{}, []*routetest.File{f}, false)
	if err != nil {
		return nil, err
	}
	for i, cr := range run.Files[0].Cases {
		if cr.Actual == nil {
			return nil, fmt.Errorf("%s: %s", f.Cases[i].Name, cr.Error)
		}
		f.Cases[i].Expect = migrationExpect(cr.Actual)
	}
	return f, nil
}

// migrationExpect is what a migration case keeps of the ingress-nginx
// side's answer: what a client and a backend see, not the route or
// listener (an Ingress there, an HTTPRoute after), nor the backend's
// port (the conversion may name it differently).
func migrationExpect(a *routetest.Actual) routetest.Expect {
	refused := a.Refused
	e := routetest.Expect{Refused: &refused, Status: a.Status, Location: a.Location}
	if svc, _, _ := strings.Cut(a.Service, ":"); svc != "" && !a.Refused {
		e.Backend = &routetest.Backend{Service: svc}
	}
	if r := a.Received; r != nil {
		e.Received = &routetest.Received{Path: r.Path, Host: r.Host}
	}
	return e
}
