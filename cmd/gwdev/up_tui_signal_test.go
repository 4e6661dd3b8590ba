package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestUpTUIStopsOnSIGTERM: `kill PID` stops a gwdev up showing the
// dashboard, every time, with its listeners closed. gwdev's own handler
// cancels the run on SIGTERM; Bubble Tea's, when it also took the signal,
// blocked forever sending a quit to the event loop that had just stopped,
// and the shutdown waited for it (in about half the runs). Several rounds,
// since it was a race.
func TestUpTUIStopsOnSIGTERM(t *testing.T) {
	bin := builtGwdev(t)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "app.yaml"), fmt.Sprintf(tmuxApp, privateLoopback(95), "{name: http, protocol: HTTP, port: 8080}"))
	for round := range 6 {
		s := startUp(t, bin, dir)
		addr := boundAddr(t, s, 8080)
		out, err := s.tmux("display-message", "-p", "-t", "gwdev", "#{pane_pid}")
		if err != nil {
			t.Fatalf("pane pid: %v: %s", err, out)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil {
			t.Fatalf("pane pid %q: %v", out, err)
		}
		// Requests keep the process busy, as a load test's end would: the
		// race showed mostly then.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() { hammer(addr, stop) })
		}
		time.Sleep(300 * time.Millisecond)
		err = syscall.Kill(pid, syscall.SIGTERM)
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatalf("round %d: SIGTERM to gwdev (pid %d): %v", round, pid, err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			if err := syscall.Kill(pid, 0); err != nil {
				break // gone (tmux reaps it: the session ends with it)
			}
			if time.Now().After(deadline) {
				stack, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stack")
				t.Fatalf("round %d: gwdev (pid %d) still runs 10 s after SIGTERM:\n%s%s", round, pid, s.capture(), stack)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			t.Errorf("round %d: %s still accepts connections after SIGTERM", round, addr)
		}
		_, _ = s.tmux("kill-server")
	}
}

// hammer sends requests to addr over one keep-alive connection until stop
// is closed or the connection fails.
func hammer(addr string, stop <-chan struct{}) {
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	for {
		select {
		case <-stop:
			return
		default:
		}
		resp, err := client.Get("http://" + addr + "/")
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
