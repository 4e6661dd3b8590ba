package emulator

import (
	"net/http"
	"strconv"

	"github.com/gwdev/gwdev/emulator/auth"
	"github.com/gwdev/gwdev/engine/table"
)

// The exchange's side of basic authentication and RBAC: it asks
// emulator/auth for the decision and writes the answer and the trace.

// HTTP basic authentication (the table's RulePolicy.BasicAuth, from
// ingress-nginx's auth-type basic): RFC 7617 credentials checked against
// htpasswd hashes, as nginx's auth_basic_user_file does. A request without
// valid credentials gets 401 with the Basic challenge; the password and the
// hashes never reach a trace (Authorization is redacted, redact.go).

// checkBasicAuth reports whether the request's credentials are valid; when
// not, it sets the 401 answer.
func (ex *exchange) checkBasicAuth(ba *table.BasicAuth) (action, bool) {
	user, pass, ok := ex.req.BasicAuth()
	switch {
	case ok && user == "":
		// nginx refuses credentials without a user name before it reads
		// the user file.
		ex.trace.Reason = "basic auth " + ba.Name + ": the credentials have an empty user name"
	case ok:
		for _, u := range ba.Users {
			if u.Name == user && auth.HtpasswdMatches(u.Hash, pass) {
				ex.trace.Filters = append(ex.trace.Filters, "BasicAuth: "+ba.Name+" user "+strconv.Quote(user)+" allowed")
				return 0, false
			}
		}
		ex.trace.Reason = "basic auth " + ba.Name + ": user " + strconv.Quote(user) + " or its password is wrong (users of " + ba.Secret + ")"
	default:
		ex.trace.Reason = "basic auth " + ba.Name + ": no credentials"
	}
	ex.status = http.StatusUnauthorized
	ex.challenge = "Basic realm=" + strconv.Quote(ba.Realm)
	return actRefused, true
}

// checkRBAC applies one policy to the exchange: it records the decision in
// the trace's filters and, on refusal, answers 403.
func (ex *exchange) checkRBAC(p *table.RBAC) (action, bool) {
	if p == nil {
		return 0, false
	}
	v := auth.EvalRBAC(p, ex.req)
	t := &ex.trace
	t.Filters = append(t.Filters, "RBAC "+p.Name+": "+v.Why)
	if v.Allowed {
		return 0, false
	}
	t.Reason = "refused by RBAC " + p.Name + ": " + v.Why
	ex.status = http.StatusForbidden
	return actRefused, true
}
