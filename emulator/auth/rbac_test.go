package auth

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine/table"
)

// TestEvalRBACPseudoHeaders: the pseudo-headers :method and :path read the
// request line, and a refusal names the principal that did not match.
func TestEvalRBACPseudoHeaders(t *testing.T) {
	p := &table.RBAC{Name: "r", Action: table.RBACAllow, Groups: []table.RBACGroup{{Name: "g", Principals: []table.RBACPrincipal{
		{Name: "m", Header: &table.RBACHeaderMatch{Name: ":method", Exact: "GET"}},
		{Name: "p", Header: &table.RBACHeaderMatch{Name: ":path", Prefix: "/public"}},
	}}}}
	req := httptest.NewRequest("GET", "/public/x?y=1", nil)
	if v := EvalRBAC(p, req); !v.Allowed {
		t.Errorf("GET /public: %s", v.Why)
	}
	req = httptest.NewRequest("POST", "/public/x", nil)
	if v := EvalRBAC(p, req); v.Allowed || !strings.Contains(v.Why, `m: header :method is not "GET"`) {
		t.Errorf("POST /public: %+v", v)
	}
}
