package app

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/internal/project"
)

// Explanation is what the data plane would do with one probe (gwdev
// explain): the trace of the data plane's own decisions, what explain did
// not do, and hints when nothing took the request.
type Explanation struct {
	Trace *emulator.Trace
	// NotDone are the steps explain leaves out (ExternalAuth asked,
	// backends connected, mirrors sent), worded.
	NotDone []string
	// Hints say which routes would take a request nothing took, and why
	// they did not (nil: a rule took it, or none would).
	Hints []string

	// probe, result and dir are what was explained, where (WriteText).
	probe  emulator.Probe
	result *engine.Result
	dir    string
	// crdsName, fileProblems and pruned are ExplainProject's notes: the
	// CRD bundle, the files that did not load and the fields dropped as
	// not in it.
	crdsName             string
	fileProblems, pruned int
}

// Explain runs probe through the data plane's decisions for res's table.
// The probe goes to the address of the Gateway gateway ("namespace/name";
// "": any with a listener on the port) or, when rawURL's host is an
// address the table binds, to that address (a mesh frontend); dir's CA
// files are what the hints trust.
func Explain(res *engine.Result, probe emulator.Probe, rawURL, gateway, dir string) (*Explanation, error) {
	addr := ""
	if gateway != "" {
		for _, g := range res.Table.Gateways {
			if g.Gateway.Namespace+"/"+g.Gateway.Name == gateway {
				addr = g.Address
			}
		}
		if addr == "" {
			return nil, fmt.Errorf("--gateway %s: no such Gateway is served (see gwdev check %s)", gateway, dir)
		}
	}
	if addr == "" {
		if u, err := url.Parse(rawURL); err == nil {
			addr = servedAddress(res.Table, u.Hostname()) // explain_mesh.go
		}
	}
	probe.Address = addr
	probe.CAFiles = KnownCAFiles(dir) // hints trust the CA that verifies (--cacert), as copy-as-curl does
	tr := emulator.ExplainProbe(res.Table, probe)
	ex := &Explanation{Trace: tr, NotDone: ExplainNotDone(res.Table, tr), probe: probe, result: res, dir: dir}
	if tr.Rule == "" && tr.Method != "" && tr.Status != http.StatusMisdirectedRequest && tr.Status != http.StatusBadRequest {
		ex.Hints = noMatchHints(res, probe.Request.Host, probe.Port, tr.GRPC)
	}
	return ex, nil
}

// ExplainProject opens dir as a project read with flags, loads and
// translates it, and explains probe there (Explain).
func ExplainProject(dir string, flags project.Flags, probe emulator.Probe, rawURL, gateway string) (*Explanation, error) {
	proj, err := project.Open([]string{dir}, flags)
	if err != nil {
		return nil, err
	}
	lr, err := proj.Load(nil)
	if err != nil {
		return nil, err
	}
	res := proj.Translate(lr.Snapshot, project.Translation{Now: metav1.NewTime(time.Now().UTC())})
	ex, err := Explain(res, probe, rawURL, gateway, dir)
	if err != nil {
		return nil, err
	}
	ex.crdsName = proj.CRDsName()
	for _, p := range lr.Problems {
		if p.Pruned {
			ex.pruned++
		} else {
			ex.fileProblems++
		}
	}
	return ex, nil
}

// noMatchHints explains, when nothing took the request, which routes would
// have matched the host and where they are attached instead (or why they
// are not attached at all).
func noMatchHints(res *engine.Result, host string, port int32, grpc bool) []string {
	var hints []string
	consider := func(key engine.ObjectKey, hostnames []string, parents []gwv1.RouteParentStatus) {
		if rs := res.Routes[key]; rs != nil && len(rs.Places) > 0 {
			for _, pl := range rs.Places {
				if pl.Port == port && !grpc && engine.RoutesGRPC(key.Kind) && table.HostnameMatches(pl.Hostname, host) {
					hints = append(hints, fmt.Sprintf("%s serves host %s on this listener, but only to gRPC requests (HTTP/2, content-type application/grpc): try grpc://", key, host))
					continue
				}
				if table.HostnameMatches(pl.Hostname, host) {
					hints = append(hints, fmt.Sprintf("%s serves host %s on %s at %s",
						key, host, pl.Listener, listenerAddress(res.Table, pl.Listener, pl.Port)))
				}
			}
			return
		}
		if !hostMatchesAny(host, hostnames) {
			return
		}
		for _, p := range parents {
			for _, c := range p.Conditions {
				if c.Type == "Accepted" && c.Status != "True" {
					hints = append(hints, fmt.Sprintf("%s would serve host %s but is not attached: %s: %s", key, host, c.Reason, c.Message))
				}
			}
		}
		if len(parents) == 0 {
			hints = append(hints, fmt.Sprintf("%s would serve host %s but has no parent gwdev manages", key, host))
		}
	}
	res.Objects.EachRoute(func(r engine.Route) {
		if slices.Contains(engine.KindNamed(r.Key().Kind).RouteProtocols, gwv1.HTTPProtocolType) {
			consider(r.Key(), hostStrings(r.Hostnames()), r.RouteStatus().Parents)
		}
	})
	return hints
}

func hostStrings(hs []gwv1.Hostname) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = strings.ToLower(string(h))
	}
	return out
}

// hostMatchesAny reports whether host matches one of the route hostnames
// (none: any host).
func hostMatchesAny(host string, hostnames []string) bool {
	if len(hostnames) == 0 {
		return true
	}
	for _, h := range hostnames {
		if table.HostnameMatches(h, host) {
			return true
		}
	}
	return false
}
