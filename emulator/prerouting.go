package emulator

import (
	"fmt"
	"net/http"

	"github.com/gwdev/gwdev/emulator/extauth"
)

// This file runs a listener's pre-routing filters (GEP-5224,
// table.ListenerTable.PreRoutingAuth): ExternalAuth checks that every
// request the listener accepts must pass, in order, before a route is
// matched. What the auth backends allow onto the request (never Host or
// :authority, see authResponseSkip) is on the request when the routes are
// matched, exactly once, afterwards. A backend that cannot be reached
// denies, as a route's ExternalAuth does: gwdev never fails open.

// preRouting decides whether the request must first pass the listener's
// pre-routing filters. done reports that the gateway answers by itself (a
// filter gwdev cannot run refuses every request with 500); pending reports
// that the checks in ex.auths must run before decide is called again with
// ex.preRouted set.
func (ex *exchange) preRouting(l *listenerRoutes) (a action, done, pending bool) {
	if l == nil || ex.preRouted {
		return 0, false, false
	}
	if why := l.l.PreRoutingRefused; why != "" {
		ex.trace.Reason = "pre-routing filters of " + l.l.Name + ": " + why
		ex.status = http.StatusInternalServerError
		return actUnsupported, true, false
	}
	if len(l.preAuth) == 0 {
		return 0, false, false
	}
	for _, p := range l.preAuth {
		if p == nil {
			ex.trace.Reason = "pre-routing ExternalAuth: the table resolves no auth backend for the filter; refused"
			ex.status = http.StatusInternalServerError
			return actInvalidBackend, true, false
		}
		ex.auths = append(ex.auths, p)
		ex.trace.Filters = append(ex.trace.Filters, fmt.Sprintf("pre-routing ExternalAuth: %s asks %s over %s", p.a.Name, p.backend.service, p.a.Protocol))
		ex.trace.AuthAsked = append(ex.trace.AuthAsked, p.a.Name)
	}
	return actPreRouting, true, true
}

// passPreRouting runs the pending pre-routing checks on r; when they all
// allow, the headers they allowed are set on r (route matching sees them),
// and the request is routed. It reports whether the request may be routed.
func (ex *exchange) passPreRouting(w http.ResponseWriter, r *http.Request) bool {
	if !ex.authorize(w, r) {
		return false
	}
	extauth.Apply(r.Header, ex.authHeaders)
	ex.auths, ex.authHeaders = ex.auths[:0], nil
	ex.preRouted = true
	ex.view = newReqView(r)
	return true
}
