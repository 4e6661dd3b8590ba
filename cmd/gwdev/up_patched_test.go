package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestUpReloadLineSaysTablePatched: a save that only adds an HTTPRoute is
// served from the last table with only the new route's virtual host built
// (engine/incremental_table.go), and up's reload line says so; a save that
// changes a Service builds the table in full and says nothing of a patch.
func TestUpReloadLineSaysTablePatched(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	save := func(name, content string) { saveByRename(t, filepath.Join(dir, name), content) }
	route := func(name string) string {
		return fmt.Sprintf(`apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: %s}
spec:
  parentRefs: [{name: web}]
  hostnames: [%s.example.com]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
`, name, name)
	}
	both := func(host string) string { // a route and its Service in one file
		return "apiVersion: v1\nkind: Service\nmetadata: {name: svc2}\nspec: {ports: [{port: 80}]}\n---\n" +
			strings.Replace(strings.Replace(route("both"), "both.example.com", host, 1), "name: svc,", "name: svc2,", 1)
	}
	save("gateway.yaml", fmt.Sprintf(upGateway, port))
	save("both.yaml", both("both.example.com"))
	save("svc.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: svc}\nspec: {ports: [{port: 80}]}\n")
	for i := range 5 {
		save(fmt.Sprintf("r%d.yaml", i), route(fmt.Sprintf("r%d", i)))
	}
	out := runUp(t, &upOptions{portOffset: 0, debounce: 10 * time.Millisecond}, dir)
	waitForOutput(t, out, "gwdev: watching")
	client := &http.Client{Timeout: 2 * time.Second}
	status := func(host string) func() string {
		return func() string {
			st, _ := echoGet(client, port, host)
			return fmt.Sprint(st)
		}
	}
	waitFor(t, out, "200", status("r0.example.com"))

	save("new.yaml", route("new"))
	waitFor(t, out, "200", status("new.example.com"))
	waitForOutput(t, out, "table patched (1 virtual host rebuilt)")
	line := lastReloadLine(out.String())
	if !strings.Contains(line, "reload #1 (") || !strings.Contains(line, "new.yaml)") || !strings.Contains(line, "6 of 7 routes reused") {
		t.Errorf("reload line %q: want reload #1 of new.yaml with 6 of 7 routes reused", line)
	}

	// Editing the route of a file that also holds its Service: the
	// Service is the same object (watch keepUnchanged), so the table is
	// patched, the old and the new hostname's virtual hosts rebuilt.
	save("both.yaml", both("moved.example.com"))
	waitFor(t, out, "200", status("moved.example.com"))
	waitForOutput(t, out, "reload #2")
	if line := lastReloadLine(out.String()); !strings.Contains(line, "table patched (2 virtual hosts rebuilt)") {
		t.Errorf("editing a route beside its Service: reload line %q, want the table patched with 2 virtual hosts rebuilt", line)
	}

	save("svc.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: svc, labels: {edited: \"yes\"}}\nspec: {ports: [{port: 80}]}\n")
	waitForOutput(t, out, "reload #3")
	waitFor(t, out, "200", status("r3.example.com"))
	if line := lastReloadLine(out.String()); strings.Contains(line, "patched") {
		t.Errorf("a Service edit said the table was patched: %q", line)
	}
}

// lastReloadLine is the last "reload #" line of up's output.
func lastReloadLine(s string) string {
	last := ""
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "reload #") {
			last = l
		}
	}
	return last
}
