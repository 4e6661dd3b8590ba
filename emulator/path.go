package emulator

import (
	"fmt"
	"net/http"
)

// normalizePath applies the Gateway's path policy (table.PathPolicy, decided
// by the engine) before any matching: the request's URL becomes the
// normalised path, which the rules match and the backend receives; the
// trace shows it and notes what changed. An escaped slash is answered here
// (a redirect to the normalised path, or a refusal) when the policy says
// so; done is then true.
func (ex *exchange) normalizePath(pr *portRoutes) (action, bool) {
	if pr.gateway == nil {
		return 0, false
	}
	u := ex.req.URL
	raw := u.EscapedPath()
	np := pr.gateway.Paths.Normalize(raw)
	if np.Escaped == raw && !np.Reject {
		return 0, false
	}
	t := &ex.trace
	switch {
	case np.Reject || (np.Redirect && ex.view.grpc):
		t.Reason = fmt.Sprintf("the path %s holds an escaped slash (%%2F or %%5C), which the Gateway's path policy refuses", raw)
		if np.Redirect {
			t.Reason += " (a gRPC client cannot follow the redirect to " + np.Escaped + ")"
		}
		ex.status, ex.pathRefused = http.StatusBadRequest, true
		return actRefused, true
	case np.Redirect:
		ex.status, ex.location = http.StatusTemporaryRedirect, np.Escaped
		if u.RawQuery != "" {
			ex.location += "?" + u.RawQuery
		}
		t.Location = ex.location
		t.Filters = append(t.Filters, fmt.Sprintf("path normalised: %s has an escaped slash; unescaped and redirected to %s (Gateway path policy)", raw, np.Escaped))
		return actRedirect, true
	}
	if pr.gateway.Paths.MatchOnly {
		ex.view.path = np.Path
		t.Filters = append(t.Filters, fmt.Sprintf("path normalised for matching: %s → %s (the backend gets the path as sent)", raw, np.Escaped))
		return 0, false
	}
	u.Path, u.RawPath = np.Path, np.Escaped
	ex.view = newReqView(ex.req)
	t.Path = requestURI(u)
	t.Filters = append(t.Filters, fmt.Sprintf("path normalised: %s → %s (dot segments removed, slashes merged, unreserved characters decoded; the backend gets %s)", raw, np.Escaped, np.Escaped))
	return 0, false
}
