package emulator

import (
	"net/http"
	"sync"
	"time"

	"github.com/gwdev/gwdev/engine/table"
)

// Explain runs the routing decision the data plane makes for req arriving
// on gatewayAddr:port (the Gateway's address and listener port as in the
// table; "" matches any Gateway with that port), without a network: the
// listener, virtual host, rule/match or why nothing matched, the filters,
// and the backend with its candidates. Status is the gateway's own answer
// (404, redirect, direct status, CORS preflight, 500/503) or 0 when the
// backend would answer. Weighted choices are random, as in the data plane.
func Explain(t *table.Table, gatewayAddr string, port int32, req *http.Request) *Trace {
	return explain(explainRouter(t), gatewayAddr, port, req)
}

// explainCache keeps the router of the last table Explain saw: tables are
// immutable once produced, so repeated questions about one table compile it
// once.
var explainCache struct {
	sync.Mutex
	table *table.Table
	rt    *router
}

func explainRouter(t *table.Table) *router {
	explainCache.Lock()
	defer explainCache.Unlock()
	if explainCache.table != t || explainCache.rt == nil {
		explainCache.table, explainCache.rt = t, compile(t, nil)
	}
	return explainCache.rt
}

func explain(rt *router, gatewayAddr string, port int32, req *http.Request) *Trace {
	if req.Host == "" && req.URL != nil {
		req.Host = req.URL.Host
	}
	ex := newExchange(req, time.Now())
	ex.trace.Port = port
	act := ex.decide(rt.lookup(gatewayAddr, port))
	t := &ex.trace
	if ex.rule != nil {
		t.Candidates = candidates(ex.rule)
		if ex.vhost != nil {
			t.Outranked = ex.vhost.outranked(&ex.view, ex.rule)
		}
	}
	if act != actProxy {
		t.Status = ex.status
	} else if ex.backend.up.echo != nil {
		t.Upstream = "echo"
	} else if ex.pinAddr >= 0 && ex.pinAddr < len(ex.backend.up.addrs) {
		t.Upstream = ex.backend.up.addrs[ex.pinAddr]
	}
	if (act == actProxy || act == actRedirect) && len(ex.auths) > 0 {
		t.Reason = "only if the ExternalAuth check allows it (explain does not ask the auth server; a failing one denies with 403)"
	}
	t.RequestHeaders = req.Header
	redactTrace(t)
	return t
}
