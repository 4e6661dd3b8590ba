package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gwdev/gwdev/internal/project"
)

// TestUpFolderComesAndGoes runs `gwdev up` on a folder that does not exist
// yet, then creates it, truncates a file for 200 ms as some editors do,
// deletes and recreates the folder and swaps it with mv, sending real
// requests: each time the routes are served again once the files are back
// (within 5 s; the time taken is logged), the log says what happened, the
// routes stay while the folder is missing (`rm -rf` deletes the files
// before the folder: the delete grace holds them), and the truncated
// file's route never answers 404.
func TestUpFolderComesAndGoes(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "site")
	port := freePort(t)
	files := func(where, svc string) {
		t.Helper()
		if err := os.MkdirAll(where, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, content := range map[string]string{"gateway.yaml": fmt.Sprintf(upGateway, port), "a.yaml": routeFile("a", svc)} {
			if err := os.WriteFile(filepath.Join(where, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}

	out := runUp(t, &upOptions{debounce: 20 * time.Millisecond, emptyGrace: time.Second}, dir)
	client := &http.Client{Timeout: 2 * time.Second}
	get := func() (int, string) { return echoGet(client, port, "a.example.com") }
	serves := func(svc string) bool { c, s := get(); return c == 200 && s == svc }
	// waitServes waits for svc, served at most 5 s after since.
	waitServes := func(what, svc string, since time.Time) {
		t.Helper()
		for !serves(svc) {
			if time.Since(since) > 5*time.Second {
				t.Fatalf("%s: %s not served within 5s; gwdev said:\n%s", what, svc, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		// A second is what a person notices, but a loaded CI machine
		// under -race may take longer: the time is logged, not judged.
		t.Logf("%s: serving %s again took %s", what, svc, time.Since(since))
	}
	waitLog := func(text string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(out.String(), text) {
			if time.Now().After(deadline) {
				t.Fatalf("gwdev never said %q; it said:\n%s", text, out.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}

	waitLog("site does not exist yet: watching for it to appear")
	// The first load compiles the validators (the watcher starts on that
	// meanwhile; it takes over a second on a loaded machine), so only the
	// returns below are held to a second.
	files(dir, "svc-1")
	for deadline := time.Now().Add(10 * time.Second); !serves("svc-1"); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the folder created after up is not served; gwdev said:\n%s", out.String())
		}
	}

	// Truncate, wait 200 ms, write: no request sees the route missing.
	var sent, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if c, _ := get(); c != 200 {
				failed.Add(1)
			}
			sent.Add(1)
		}
	})
	a := filepath.Join(dir, "a.yaml")
	if err := os.Truncate(a, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := os.WriteFile(a, []byte(routeFile("a", "svc-2")), 0o644); err != nil {
		t.Fatal(err)
	}
	waitServes("rewritten after truncation", "svc-2", time.Now())
	close(stop)
	wg.Wait()
	t.Logf("truncated for 200 ms: %d requests, %d not 200", sent.Load(), failed.Load())
	if failed.Load() > 0 || sent.Load() < 10 {
		t.Errorf("truncated for 200 ms: %d of %d requests failed", failed.Load(), sent.Load())
	}

	// rm -rf dir: the last objects stay; mkdir dir; cp …: served again.
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	waitLog("site is gone (removed or renamed away)")
	if !serves("svc-2") {
		t.Error("the routes went away with the folder")
	}
	start := time.Now()
	files(dir, "svc-3")
	waitServes("folder recreated", "svc-3", start)
	waitLog("site is there: watching it, every file (re)loaded")

	// mv dir dir.old && mv dir.new dir, then an edit in the new folder.
	files(filepath.Join(parent, "site.new"), "svc-4")
	if err := os.Rename(dir, filepath.Join(parent, "site.old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(parent, "site.new"), dir); err != nil {
		t.Fatal(err)
	}
	waitServes("folder swapped", "svc-4", time.Now())
	if err := os.WriteFile(a, []byte(routeFile("a", "svc-5")), 0o644); err != nil {
		t.Fatal(err)
	}
	waitServes("edit after the swap", "svc-5", time.Now())
}

// TestUpMissingFolderNoConfigReload: when the folder up waits for appears
// without a gwdev.yaml, the log says the folder is there and loads it, but
// no "reload #1 (…/gwdev.yaml)": gwdev.yaml did not change. Writing one
// then is a reload naming it.
func TestUpMissingFolderNoConfigReload(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "later")
	port := freePort(t)
	out := runUp(t, &upOptions{debounce: 20 * time.Millisecond, admin: "off"}, dir)
	waitFor := func(text string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(out.String(), text); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("gwdev never said %q; it said:\n%s", text, out.String())
			}
		}
	}
	waitFor("later does not exist yet")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2*project.ConfigRetry + 200*time.Millisecond) // the gwdev.yaml watch finds the (empty) folder
	if err := os.WriteFile(filepath.Join(dir, "gateway.yaml"), []byte(fmt.Sprintf(upGateway, port)+"---\n"+routeFile("a", "svc-1")), 0o644); err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, s := echoGet(client, port, "a.example.com"); c == 200 && s == "svc-1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not served; gwdev said:\n%s", out.String())
		}
	}
	time.Sleep(2*project.ConfigRetry + 200*time.Millisecond) // the gwdev.yaml watch retries every project.ConfigRetry
	if s := out.String(); strings.Contains(s, "gwdev.yaml") {
		t.Errorf("a reload names gwdev.yaml, which does not exist:\n%s", s)
	}
	if err := os.WriteFile(filepath.Join(dir, "gwdev.yaml"), []byte("backends: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("gwdev.yaml)")
}
