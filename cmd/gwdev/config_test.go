package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gwdev/gwdev/internal/project"
)

// TestProjectConfigErrorsNameLineAndField: every mistake in gwdev.yaml is
// reported at file:line:column with the field it is about.
func TestProjectConfigErrorsNameLineAndField(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"bad key", "backends:\n  default/api:8080: 127.0.0.1:3000\n  Bad_Name:80: 127.0.0.1:1\n",
			`gwdev.yaml:3:3: backends."Bad_Name:80": "Bad_Name:80" is not namespace/service:port`},
		{"bad target", "# comment\nbackends:\n  api:8080: localhost\n",
			`gwdev.yaml:3:3: backends."api:8080": target "localhost" is not host:port`},
		{"unknown section", "backends: {}\nbackend:\n  api:80: 127.0.0.1:1\n",
			`gwdev.yaml:2:1: backend: unknown field (gwdev.yaml has backends, profiles, ycCertificates, crds, render)`},
		{"render without a command", "render:\n  - watch: [chart]\n",
			`gwdev.yaml:2:5: render[0].command: required: the command whose output is loaded`},
		{"render watch not a list", "render:\n  - command: helm template x ./chart\n    watch: chart\n",
			`gwdev.yaml:3:12: render[0].watch: want a list of files and folders, not "chart"`},
		{"render unknown field", "render:\n  - command: x\n    run: y\n",
			`gwdev.yaml:3:5: render[0].run: unknown field (want command and watch)`},
		{"list instead of mapping", "backends:\n  - api:80=127.0.0.1:1\n",
			`gwdev.yaml:2:3: backends: want a mapping of KEY: VALUE, not a list`},
		{"syntax", "backends:\n  api:80: [127.0.0.1:1\n",
			`gwdev.yaml:3:`},
		{"unknown profile", "profiles:\n  gwdev: nope\n",
			`gwdev.yaml:2:3: profiles: "gwdev=nope": want GATEWAYCLASS=PROFILE`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "gwdev.yaml"), []byte(c.yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := project.Open([]string{dir}, project.Flags{})
			if err == nil {
				t.Fatalf("no error for %q", c.yaml)
			}
			got := strings.TrimPrefix(err.Error(), dir+"/")
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("error\n  %s\nwant it to start with\n  %s", got, c.want)
			}
		})
	}
}

// TestCheckWarnsAboutUnusedBackendMapping: a gwdev.yaml mapping for a
// Service no manifest defines (or a port it does not have) is a warning at
// the mapping's line; a mapping that is used is not.
func TestCheckWarnsAboutUnusedBackendMapping(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "routes.yaml"), fmt.Sprintf(upGateway, 80)+"---\n"+routeFile("app", "app"))
	writeFile(t, filepath.Join(dir, "gwdev.yaml"), "backends:\n  default/app:80: 127.0.0.1:3000\n  default/ap:80: 127.0.0.1:3001\n  app:81: 127.0.0.1:3002\n")
	var out bytes.Buffer
	cmd := newRootCmd(strings.NewReader(""), &out, &out)
	cmd.SetArgs([]string{"check", dir})
	_ = cmd.Execute()
	got := strings.ReplaceAll(out.String(), dir+"/", "")
	for _, want := range []string{
		"gwdev.yaml:3  Service/default/ap",
		"backend mapping default/ap:80 → 127.0.0.1:3001 is not used: no manifest defines Service default/ap",
		"gwdev.yaml:4  Service/default/app",
		"backend mapping default/app:81 → 127.0.0.1:3002 is not used: Service default/app has no port 81",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("check output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "default/app:80 →") {
		t.Errorf("a used mapping is reported:\n%s", got)
	}
}

// TestUpReloadsProjectConfig: editing gwdev.yaml while `gwdev up` runs
// moves a Service to the new local address at once; a gwdev.yaml that
// stops reading is reported with file:line and the last good mappings keep
// serving; a mapping to an unknown Service is a warning in up's output.
func TestUpReloadsProjectConfig(t *testing.T) {
	backend := func(name string) string {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) }))
		t.Cleanup(s.Close)
		return strings.TrimPrefix(s.URL, "http://")
	}
	a, b := backend("A"), backend("B")
	dir := t.TempDir()
	port := freePort(t)
	writeFile(t, filepath.Join(dir, "routes.yaml"), fmt.Sprintf(upGateway, port)+"---\n"+routeFile("app", "app"))
	cfg := filepath.Join(dir, "gwdev.yaml")
	saveByRename(t, cfg, "backends:\n  app:80: "+a+"\n")
	out := runUp(t, &upOptions{noTUI: true, portOffset: 0, debounce: 10 * time.Millisecond}, dir)
	get := func() string {
		req, _ := http.NewRequest("GET", fmt.Sprintf("http://127.0.0.1:%d/", port), nil)
		req.Host = "app.example.com"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return string(body)
	}
	waitFor(t, out, "A", get)

	saveByRename(t, cfg, "backends:\n  app:80: "+b+"\n  nosuch:80: 127.0.0.1:1\n")
	waitFor(t, out, "B", get)
	waitForOutput(t, out, "backend mapping default/nosuch:80 → 127.0.0.1:1 is not used: no manifest defines Service default/nosuch")

	saveByRename(t, cfg, "backends:\n  app:80: "+a+"\n  - oops\n")
	waitForOutput(t, out, "gwdev.yaml:3:")
	if got := get(); got != "B" {
		t.Errorf("after a broken gwdev.yaml the last good mapping should serve: got %q", got)
	}
	saveByRename(t, cfg, "backends:\n  app:80: "+a+"\n")
	waitFor(t, out, "A", get)
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// saveByRename writes a file the way editors save: a temporary file renamed
// over it.
func saveByRename(t *testing.T, path, content string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp")
	writeFile(t, tmp, content)
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls get until it returns want (settle at most).
func waitFor(t *testing.T, out *syncBuffer, want string, get func() string) {
	t.Helper()
	deadline := time.Now().Add(settle)
	got := ""
	for time.Now().Before(deadline) {
		if got = get(); got == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("got %q, want %q; up said:\n%s", got, want, out)
}

// waitForOutput waits until up's output contains want (settle at most).
func waitForOutput(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	waitFor(t, out, "yes", func() string {
		if strings.Contains(out.String(), want) {
			return "yes"
		}
		return "no: waiting for " + want
	})
}
