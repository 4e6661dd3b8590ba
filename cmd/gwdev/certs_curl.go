package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
)

// gatewayAddresses maps "namespace/name" to the loopback address gwdev up
// gives each Gateway of a translation's table (spec.addresses, else
// 127.0.0.1, .2, … by name).
func gatewayAddresses(t *engine.Table) map[string]string {
	out := map[string]string{}
	for _, g := range t.Gateways {
		out[g.Gateway.Namespace+"/"+g.Gateway.Name] = g.Address
	}
	return out
}

// certsCurl is the curl line that reaches a listener of w with the CA
// trusted: the name resolved to the Gateway's address, on the port gwdev
// serves.
func certsCurl(caPath string, w *app.WantedSecret, addr string) string {
	host := w.Hostnames[0] // the shortest name: app.example.com before admin.app.example.com
	for _, h := range w.Hostnames[1:] {
		if strings.Count(h, ".") < strings.Count(host, ".") {
			host = h
		}
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		host = "www." + rest
	}
	if addr == "" {
		addr = "127.0.0.1"
	}
	port := strconv.Itoa(int(servedPort(w.Port)))
	url := "https://" + host + "/"
	if port != "443" {
		url = "https://" + host + ":" + port + "/"
	}
	return fmt.Sprintf("curl --cacert %s --resolve %s:%s:%s %s", caPath, host, port, addr, url)
}

// servedPort is the port gwdev up will most likely serve port on: a port
// below the unprivileged start (net.ipv4.ip_unprivileged_port_start, 1024
// when unknown) cannot be bound by a user other than root, and is served
// on port+DefaultPortOffset.
func servedPort(port int32) int32 {
	if os.Geteuid() == 0 || port >= unprivilegedPortStart() {
		return port
	}
	return port + emulator.DefaultPortOffset
}

func unprivilegedPortStart() int32 {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_unprivileged_port_start")
	if err != nil {
		return 1024
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 1024
	}
	return int32(n)
}

// portNote says when a printed port differs from the listener's.
func portNote(wanted []*app.WantedSecret) string {
	for _, w := range wanted {
		if p := servedPort(w.Port); p != w.Port {
			return fmt.Sprintf("(port %d is served on %d: as a user other than root gwdev up cannot bind ports below %d; --port-offset)",
				w.Port, p, unprivilegedPortStart())
		}
	}
	return ""
}
