package report

import (
	"fmt"
	"io"

	"github.com/gwdev/gwdev/engine"
)

// WritePolicies writes every object a policy targets, with each policy
// that applies (✓) or was refused (✗) and why (check --policies).
func WritePolicies(out io.Writer, res *engine.Result) {
	fmt.Fprintln(out, "\nPolicies:")
	if len(res.Policies) == 0 {
		fmt.Fprintln(out, "  no policy targets anything")
		return
	}
	var last engine.ObjectKey
	for _, e := range res.Policies {
		if e.Target != last {
			last = e.Target
			fmt.Fprintf(out, "  %s %s/%s\n", e.Target.Kind, e.Target.Namespace, e.Target.Name)
		}
		fmt.Fprintf(out, "    %s\n", PolicyLine(e))
	}
}

// PolicyLine renders one effect: mark, policy, section, reason, message.
func PolicyLine(e engine.PolicyEffect) string {
	mark := "✓"
	if !e.Applied {
		mark = "✗"
	}
	return mark + " " + e.PolicyName() + "  " + e.Reason + ": " + e.Message
}
