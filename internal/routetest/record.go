package routetest

// ExpectFrom is what a case records of what happened (gwdev test
// --record): the refusal, or the listener, route, rule and match, the
// backend, the status, a redirect's Location, what the echo backend
// received (path and Host) and a stream's reply. Response headers and
// the headers the backend received are left out: they carry dates and
// addresses that change from run to run.
func ExpectFrom(a *Actual) Expect {
	var e Expect
	refused := a.Refused
	e.Refused = &refused
	e.Status = a.Status
	e.GRPCStatus = a.GRPCStatus
	if a.Refused {
		return e
	}
	e.Listener = a.Listener
	if r := a.Route; r != nil {
		rule, match := r.Rule, r.Match
		e.Route = &RouteExpect{Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Rule: &rule, Match: &match}
	}
	if a.Service != "" {
		e.Backend = &Backend{Service: a.Service, Target: a.Target}
	}
	e.Location = a.Location
	if r := a.Received; r != nil {
		e.Received = &Received{Path: r.Path, Host: r.Host}
	}
	if a.Reply != "" {
		reply := a.Reply
		e.Reply = &reply
	}
	return e
}
