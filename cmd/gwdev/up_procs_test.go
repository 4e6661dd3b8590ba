package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// `gwdev up` serves on half the Ps the process started with (issue 42:
// CPU per request) and puts them back when it stops; the command sets
// this, so the test runs the command as a user does, in this process.
// Not parallel: GOMAXPROCS is the test process's.
func TestUpServesOnHalfTheCores(t *testing.T) {
	t.Setenv("GOMAXPROCS", "")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	dir := t.TempDir()
	port, adminPort := freePort(t), freePort(t)
	if err := os.WriteFile(filepath.Join(dir, "gw.yaml"), []byte(fmt.Sprintf(upGateway, port)+"---\n"+routeFile("a", "svc-a")), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		root := newRootCmd(strings.NewReader(""), &out, &out)
		root.SetArgs([]string{"up", "--no-tui", "--admin", fmt.Sprintf("127.0.0.1:%d", adminPort), dir})
		done <- root.ExecuteContext(ctx)
	}()
	metric := func() string {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", adminPort))
		if err != nil {
			return ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		for _, l := range bytes.Split(b, []byte("\n")) {
			if v, ok := bytes.CutPrefix(l, []byte("go_sched_gomaxprocs_threads ")); ok {
				return string(v)
			}
		}
		return "missing"
	}
	waitForOutput(t, &out, "gwdev: watching ")
	deadline := time.Now().Add(settle)
	for metric() != "2" {
		if time.Now().After(deadline) {
			t.Fatalf("serving: go_sched_gomaxprocs_threads %q, want 2 of 4; gwdev said:\n%s", metric(), out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A save reloads on all of them and serves on two again.
	if err := os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(routeFile("b", "svc-b")), 0o644); err != nil {
		t.Fatal(err)
	}
	waitForOutput(t, &out, "reload #1 (")
	// The reload's line can come before its hold ends, and a save can
	// make a second reload: what must hold is that serving goes back to
	// two once the reloads are over.
	deadline = time.Now().Add(settle)
	for runtime.GOMAXPROCS(0) != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("after a reload: GOMAXPROCS %d, want 2; gwdev said:\n%s", runtime.GOMAXPROCS(0), out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("up: %v", err)
	}
	if got := runtime.GOMAXPROCS(0); got != 4 {
		t.Errorf("after up stopped: GOMAXPROCS %d, want the 4 it found", got)
	}
}
