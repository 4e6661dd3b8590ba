package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gwdev up runs the folder's routing tests after every reload: a save that
// breaks a case says which and why, at the test file's line, and the next
// save that fixes it says all pass again.
func TestUpRunsRoutingTests(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	write := func(name, content string) {
		t.Helper()
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	write("gateway.yaml", fmt.Sprintf(upGateway, port))
	write("a.yaml", routeFile("a", "svc-a"))
	write("a.gwtest.yaml", fmt.Sprintf(`cases:
- name: a goes to svc-a
  request: {url: "http://a.example.com:%d/x"}
  expect:
    status: 200
    backend: {service: default/svc-a}
`, port))
	out := runUp(t, &upOptions{portOffset: 0, debounce: 10 * time.Millisecond}, dir)
	waitForUp(t, out, "tests pass", func() bool { return strings.Contains(out.String(), "tests (reload 0): all 1 cases pass") })
	write("a.yaml", routeFile("b", "svc-a")) // the route now serves b.example.com only
	waitForUp(t, out, "the broken case", func() bool {
		return strings.Contains(out.String(), "tests (reload 1): 1 of 1 cases fail") &&
			strings.Contains(out.String(), "a.gwtest.yaml:5 status: expected 200, got 404") &&
			strings.Contains(out.String(), "a.gwtest.yaml:6 backend.service: expected default/svc-a, got (none)")
	})
	write("a.yaml", routeFile("a", "svc-a"))
	waitForUp(t, out, "tests pass again", func() bool { return strings.Contains(out.String(), "tests (reload 2): all 1 cases pass") })
}

// A save of only a test file runs the tests again on the State served,
// without a reload of the manifests: a wrong expectation fails at its
// line, the fix passes again.
func TestUpRerunsTestsOnTestFileSave(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	write := func(name, content string) {
		t.Helper()
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	cases := func(status int) string {
		return fmt.Sprintf(`cases:
- name: a goes to svc-a
  request: {url: "http://a.example.com:%d/x"}
  expect:
    status: %d
    backend: {service: default/svc-a}
`, port, status)
	}
	write("gateway.yaml", fmt.Sprintf(upGateway, port))
	write("a.yaml", routeFile("a", "svc-a"))
	write("a.gwtest.yaml", cases(200))
	out := runUp(t, &upOptions{portOffset: 0, debounce: 10 * time.Millisecond}, dir)
	waitForUp(t, out, "tests pass", func() bool { return strings.Contains(out.String(), "tests (reload 0): all 1 cases pass") })
	write("a.gwtest.yaml", cases(503)) // only the test file: a wrong expectation
	waitForUp(t, out, "the broken case", func() bool {
		return strings.Contains(out.String(), "tests (reload 0, a.gwtest.yaml saved): 1 of 1 cases fail") &&
			strings.Contains(out.String(), "a.gwtest.yaml:5 status: expected 503, got 200")
	})
	// Edited in place (truncate, write) as some editors save.
	if err := os.WriteFile(filepath.Join(dir, "a.gwtest.yaml"), []byte(cases(200)), 0o644); err != nil {
		t.Fatal(err)
	}
	waitForUp(t, out, "tests pass again", func() bool {
		return strings.Count(out.String(), "tests (reload 0, a.gwtest.yaml saved): all 1 cases pass") == 1
	})
	if s := out.String(); strings.Contains(s, "reload 1") {
		t.Errorf("a save of only the test file reloaded the manifests:\n%s", s)
	}
}
