package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/emulator"
)

// --address no longer opens the admin API to other machines: a
// non-loopback --admin needs --admin-allow-remote (issue 12, finding 5).
func TestAdminStaysLoopbackWithAddress(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	if err := os.WriteFile(filepath.Join(dir, "gw.yaml"), []byte(fmt.Sprintf(upGateway, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	o := &upOptions{debounce: 10 * time.Millisecond, address: "127.0.0.1", admin: fmt.Sprintf("0.0.0.0:%d", freePort(t)), noTUI: true}
	go func() { done <- o.run(ctx, out, out, dir) }()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "watching") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "is not loopback (--admin-allow-remote to expose it)") || strings.Contains(s, "admin API on") {
		t.Errorf("gwdev said:\n%s", s)
	}
}

func TestLimitsUnderDescriptorLimit(t *testing.T) {
	for _, c := range []struct {
		flag int
		fds  uint64
		want int
	}{
		{0, 0, emulator.DefaultMaxConnsPerListener},
		{0, 1 << 20, emulator.DefaultMaxConnsPerListener},
		{0, 1024, 128},
		{0, 64, 16},
		{50, 1024, 50},
	} {
		if got := limitUnder(c.flag, emulator.DefaultMaxConnsPerListener, c.fds); got != c.want {
			t.Errorf("limitUnder(%d, fds %d) = %d, want %d", c.flag, c.fds, got, c.want)
		}
	}
	if runtime.GOOS != "windows" && raiseFileLimit() < 64 {
		t.Error("descriptor limit unknown or tiny after raising it")
	}
}
