package emulator

// outranked lists the rules of the virtual host, after the one that took
// the request, that match it too: the candidates that lost on precedence.
// It uses the data plane's matchers, so explain names exactly the rules the
// router passed over.
func (vh *vhostRoutes) outranked(v *reqView, winner *ruleRoutes) []string {
	var out []string
	after := false
	for _, r := range vh.rules {
		if r == winner {
			after = true
			continue
		}
		if after && r.matches(v) {
			out = append(out, r.r.Name)
		}
	}
	return out
}

// matches reports whether the rule's match accepts the request (false for a
// broken rule).
func (r *ruleRoutes) matches(v *reqView) bool {
	switch {
	case r.broken != "":
		return false
	case r.grpc != nil:
		return r.grpc.matches(v)
	case r.http != nil:
		return r.http.matchPath(v.path) && r.http.matchRest(v)
	}
	return false
}
