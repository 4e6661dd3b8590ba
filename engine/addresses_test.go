package engine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/testkit"
)

// gatewaysYAML renders Gateways of class gwdev with one HTTP listener;
// "name=127.0.0.9" asks for that address in spec.addresses.
func gatewaysYAML(gws ...string) []byte {
	var b strings.Builder
	for _, gw := range gws {
		name, addr, _ := strings.Cut(gw, "=")
		fmt.Fprintf(&b, "---\napiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: %s}\nspec:\n  gatewayClassName: gwdev\n", name)
		if addr != "" {
			fmt.Fprintf(&b, "  addresses: [{type: IPAddress, value: %q}]\n", addr)
		}
		b.WriteString("  listeners: [{name: http, protocol: HTTP, port: 80}]\n")
	}
	return []byte(b.String())
}

// servedAddresses maps each served Gateway's name to its address, from the
// routing table and checked against status.addresses.
func servedAddresses(t *testing.T, res *engine.Result) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, g := range res.Table.Gateways {
		out[g.Gateway.Name] = g.Address
	}
	for _, gw := range res.Objects.Gateways {
		st := ""
		if len(gw.Status.Addresses) > 0 {
			st = gw.Status.Addresses[0].Value
		}
		if st != out[gw.Name] {
			t.Errorf("Gateway %s: status.addresses %q, table %q", gw.Name, st, out[gw.Name])
		}
	}
	return out
}

// TestTranslateNextKeepsAddresses: across reloads (TranslateNext, what
// gwdev up and the conformance harness call) a Gateway keeps its address
// while it exists; a new Gateway that sorts first does not move it;
// spec.addresses wins over a kept address; a removed Gateway's address is
// free again.
func TestTranslateNextKeepsAddresses(t *testing.T) {
	var prev *engine.Result
	step := func(want map[string]string, gws ...string) {
		t.Helper()
		prev = engine.TranslateNext(prev, testkit.Load(t, "gateways.yaml", gatewaysYAML(gws...)), engine.Options{Now: goldenNow})
		got := servedAddresses(t, prev)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%v: addresses %v, want %v", gws, got, want)
		}
	}
	step(map[string]string{"web": "127.0.0.1"}, "web")
	// Translate alone would number a-first before web: 127.0.0.1.
	step(map[string]string{"a-first": "127.0.0.2", "web": "127.0.0.1"}, "a-first", "web")
	step(map[string]string{"a-first": "127.0.0.2", "m": "127.0.0.3", "web": "127.0.0.1"}, "a-first", "m", "web")
	// A Gateway that asks for web's address gets it; web moves.
	step(map[string]string{"a-first": "127.0.0.2", "b": "127.0.0.1", "m": "127.0.0.3", "web": "127.0.0.4"}, "a-first", "b=127.0.0.1", "m", "web")
	// Removing Gateways frees their addresses for new ones only.
	step(map[string]string{"m": "127.0.0.3", "web": "127.0.0.4", "z": "127.0.0.1"}, "m", "web", "z")
	// A Gateway that cannot be programmed for a while (it asks for a
	// non-loopback address) keeps its address reserved and finds it again.
	step(map[string]string{"k": "127.0.0.2", "m": "127.0.0.3", "z": "127.0.0.1"}, "m", "k", "web=192.0.2.1", "z")
	step(map[string]string{"k": "127.0.0.2", "m": "127.0.0.3", "web": "127.0.0.4", "z": "127.0.0.1"}, "m", "k", "web", "z")
	// Without a previous result, Translate's numbering.
	prev = nil
	step(map[string]string{"k": "127.0.0.1", "m": "127.0.0.2", "web": "127.0.0.3", "z": "127.0.0.4"}, "m", "k", "web", "z")
}
