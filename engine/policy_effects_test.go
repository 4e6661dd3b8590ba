package engine_test

import (
	"path/filepath"
	"testing"

	"github.com/gwdev/gwdev/engine"
)

// TestPolicyEffectsAgreeWithTable checks, on every golden case, that the
// recorded BackendTLSPolicy effects are what the routing table does: every
// backend with TLS names a policy recorded as applied to its Service, and
// a policy recorded as refused for a Service never gives its backends TLS.
// The same for XBackendTrafficPolicy retry budgets. An XBackend's TLS is
// its own, not a policy's.
func TestPolicyEffectsAgreeWithTable(t *testing.T) {
	ins, _ := filepath.Glob("testdata/*.in.yaml")
	applied, refused, budgets := 0, 0, 0
	for _, in := range ins {
		res := translateFile(t, in)
		type pair struct {
			policy  string
			service engine.ObjectKey
		}
		ok, no := map[pair]bool{}, map[pair]bool{}
		for _, e := range res.Policies {
			if e.Policy.Kind != "BackendTLSPolicy" && e.Policy.Kind != "XBackendTrafficPolicy" {
				continue
			}
			p := pair{e.Policy.Namespace + "/" + e.Policy.Name, e.Target}
			if e.Applied {
				ok[p] = true
			} else if e.Section == "" {
				no[p] = true
			}
		}
		for _, g := range res.Table.Gateways {
			for _, p := range g.Ports {
				for _, l := range p.Listeners {
					for _, vh := range l.VirtualHosts {
						for _, r := range vh.Rules {
							for _, b := range r.Backends {
								if rb := b.RetryBudget; rb != nil {
									if k := (pair{rb.Policy, b.Service}); !ok[k] || no[k] {
										t.Errorf("%s: %s has the retry budget of %s, which is not recorded as applied to it", in, b.Name, rb.Policy)
									}
									budgets++
								}
								if b.TLS == nil || b.Service.Kind == "XBackend" {
									continue
								}
								k := pair{b.TLS.Policy, b.Service}
								if !ok[k] {
									t.Errorf("%s: %s gets TLS from %s, which is not recorded as applied to it", in, b.Name, b.TLS.Policy)
								}
								if no[k] {
									t.Errorf("%s: %s gets TLS from %s, recorded as refused for %s", in, b.Name, b.TLS.Policy, b.Service)
								}
								applied++
							}
						}
					}
				}
			}
		}
		refused += len(no)
	}
	if applied < 10 || refused < 3 || budgets < 4 {
		t.Errorf("only %d TLS backends, %d refusals and %d budgets checked", applied, refused, budgets)
	}
	t.Logf("%d backends with TLS, %d with a retry budget, %d refused policy targets checked", applied, budgets, refused)
}

// TestPolicyName: the policy as check --policies and the TUI list it, with
// the Service port a section names.
func TestPolicyName(t *testing.T) {
	e := engine.PolicyEffect{Policy: engine.ObjectKey{Kind: "BackendTLSPolicy", Namespace: "ns", Name: "p"}}
	if got := e.PolicyName(); got != "BackendTLSPolicy ns/p" {
		t.Errorf("PolicyName() = %q", got)
	}
	e.Section = "https"
	if got := e.PolicyName(); got != "BackendTLSPolicy ns/p (port https)" {
		t.Errorf("PolicyName() = %q", got)
	}
}
