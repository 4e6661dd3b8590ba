package app

import (
	"net"
	"strconv"

	"github.com/gwdev/gwdev/engine"
)

// listenerAddress returns the address:port the table serves a listener on
// (by its table name, on port), before any port offset; "" when the table
// does not serve it.
func listenerAddress(t *engine.Table, listener string, port int32) string {
	if t == nil {
		return ""
	}
	for _, g := range t.Gateways {
		for _, p := range g.Ports {
			if p.Port != port {
				continue
			}
			for _, l := range p.Listeners {
				if l.Name == listener && g.Address != "" {
					return net.JoinHostPort(g.Address, strconv.Itoa(int(port)))
				}
			}
		}
	}
	return ""
}
