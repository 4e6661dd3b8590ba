package emulator

import (
	"context"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/engine/table"
)

// A seeded Server (Config.PickSeed) picks the same backends for the same
// requests on every run; another seed picks others.
func TestPickSeedRepeatsSplits(t *testing.T) {
	picks := func(seed uint64) string {
		h := serve(t, func(p int32) *table.Table { return newTable() })
		h.s = New(Config{PickSeed: seed})
		t.Cleanup(func() { _ = h.s.Close(context.Background()) })
		h.apply(newTable(gateway("gw", "127.0.0.1", port(h.port, listener("http", "",
			vhost("", rule("httproute/default/r", prefix("/"), echo("a", 3), echo("b", 1))))))))
		var b strings.Builder
		for range 64 {
			b.WriteString(h.get("x.example", "/").echo(t).Service)
		}
		return b.String()
	}
	one, again, other := picks(7), picks(7), picks(8)
	if one != again {
		t.Errorf("seed 7 picked\n%s\nthen\n%s", one, again)
	}
	if one == other {
		t.Errorf("seeds 7 and 8 picked the same: %s", one)
	}
	if !strings.Contains(one, "a") || !strings.Contains(one, "b") {
		t.Errorf("a 3:1 split picked %s", one)
	}
	if newPickSource(0) != nil {
		t.Error("seed 0 is not random picks")
	}
}
