package app

import (
	"net/netip"

	"github.com/gwdev/gwdev/engine"
)

// servedAddress returns host when it is an IP address some entry of the
// routing table binds ("" otherwise): `gwdev explain http://127.0.10.1:8080/`
// then explains the request as that address receives it, which is how a
// mesh frontend (a Service's address) is named.
func servedAddress(t *engine.Table, host string) string {
	ip, err := netip.ParseAddr(host)
	if err != nil || t == nil {
		return ""
	}
	for _, g := range t.Gateways {
		if g.Address == ip.String() {
			return g.Address
		}
	}
	return ""
}
