package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/ingressnginx"
)

// printIngresses writes the Ingress section of `gwdev check`: each Ingress
// with its class, hosts and the address it is served on as ingress-nginx
// would serve it, or why it is not served.
func printIngresses(w io.Writer, res *engine.Result) {
	if len(res.Objects.Ingresses) == 0 {
		return
	}
	fmt.Fprintln(w, "\nIngresses (served as ingress-nginx would; gwdev migrate converts them):")
	for _, ing := range res.Objects.Ingresses {
		class := ingressnginx.ClassName(ing)
		if class == "" {
			class = "(default class)"
		}
		var hosts []string
		for _, r := range ing.Spec.Rules {
			hosts = append(hosts, hostOrAnyString(r.Host))
		}
		if len(hosts) == 0 {
			hosts = []string{"default backend"}
		}
		where := "not served"
		if lb := ing.Status.LoadBalancer.Ingress; len(lb) > 0 {
			where = "address " + lb[0].IP
		}
		fmt.Fprintf(w, "  Ingress %s/%s  class %s  %s  hosts %s\n", ing.Namespace, ing.Name, class, where, strings.Join(hosts, ", "))
	}
}

// hostOrAnyString is a rule host, "*" for any.
func hostOrAnyString(h string) string {
	if h == "" {
		return "*"
	}
	return h
}
