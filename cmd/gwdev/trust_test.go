package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// consentGateway is a valid Gateway: a folder that loads without problems
// apart from what consent withholds.
const consentGateway = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: web}
spec:
  gatewayClassName: gwdev
  listeners: [{name: http, protocol: HTTP, port: 80}]
`

// trustRecordIn points the trust record at a fresh folder for the test.
func trustRecordIn(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("GWDEV_CONFIG_DIR", dir)
	return dir
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestCheckRunsARenderOnlyWithConsent: `gwdev check DIR` on a folder whose
// gwdev.yaml has a render command does not run it (no marker), exits 1 and
// names the command and how to allow it, while the folder's Gateway still
// loads; --trust runs it; so does a trust record (gwdev trust DIR); editing
// gwdev.yaml voids the record; --revoke withdraws it.
func TestCheckRunsARenderOnlyWithConsent(t *testing.T) {
	record := trustRecordIn(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "MARKER")
	writeFiles(t, dir, map[string]string{
		"gwdev.yaml":   "render: [{command: \"touch MARKER; echo ---\"}]\n",
		"gateway.yaml": consentGateway,
	})
	out, errOut, code := runGwdev(t, "", "check", dir)
	if exists(marker) {
		t.Fatal("check ran the folder's render command without consent")
	}
	if code != exitProblems || !strings.Contains(out, `"touch MARKER; echo ---"`) || !strings.Contains(out, "gwdev trust "+dir) ||
		!strings.Contains(out, "--trust") || !strings.Contains(out, "Gateway") {
		t.Fatalf("without consent: exit %d, want 1 with the command, gwdev trust %s and --trust named:\n%s%s", code, dir, out, errOut)
	}

	out, errOut, code = runGwdev(t, "", "check", "--trust", dir)
	if !exists(marker) || code != exitOK {
		t.Fatalf("with --trust: marker %v, exit %d; want the command run and exit 0:\n%s%s", exists(marker), code, out, errOut)
	}
	os.Remove(marker)

	out, errOut, code = runGwdev(t, "", "trust", dir)
	if code != exitOK || !strings.Contains(out, "runs: touch MARKER; echo ---") || !exists(filepath.Join(record, "trusted.json")) {
		t.Fatalf("gwdev trust: exit %d, record %v:\n%s%s", code, exists(filepath.Join(record, "trusted.json")), out, errOut)
	}
	if exists(filepath.Join(dir, "trusted.json")) {
		t.Fatal("the trust record is inside the folder")
	}
	out, errOut, code = runGwdev(t, "", "check", dir)
	if !exists(marker) || code != exitOK {
		t.Fatalf("trusted: marker %v, exit %d; want the command run and exit 0:\n%s%s", exists(marker), code, out, errOut)
	}
	os.Remove(marker)

	// A pull request changes the command: the record no longer applies.
	writeFiles(t, dir, map[string]string{"gwdev.yaml": "render: [{command: \"touch MARKER; touch EVIL; echo ---\"}]\n"})
	out, errOut, code = runGwdev(t, "", "check", dir)
	if exists(marker) || exists(filepath.Join(dir, "EVIL")) || code != exitProblems || !strings.Contains(out, `"touch MARKER; touch EVIL; echo ---"`) {
		t.Fatalf("after editing gwdev.yaml: marker %v, exit %d; want nothing run and exit 1:\n%s%s", exists(marker), code, out, errOut)
	}
	out, _, _ = runGwdev(t, "", "trust", "--list")
	if real, _ := filepath.EvalSymlinks(dir); !strings.Contains(out, real) || !strings.Contains(out, "gwdev.yaml changed since") {
		t.Errorf("trust --list:\n%s", out)
	}

	runGwdev(t, "", "trust", dir)
	out, _, code = runGwdev(t, "", "trust", "--revoke", dir)
	if code != exitOK || !strings.Contains(out, "no longer trusted") {
		t.Fatalf("trust --revoke: exit %d\n%s", code, out)
	}
	if _, _, code = runGwdev(t, "", "check", dir); exists(marker) || code != exitProblems {
		t.Fatalf("after --revoke: marker %v, exit %d; want nothing run", exists(marker), code)
	}
}

// TestEveryProjectCommandNeedsConsent: explain, graph, migrate and certs
// load the project too, and run no render command without consent.
func TestEveryProjectCommandNeedsConsent(t *testing.T) {
	trustRecordIn(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "MARKER")
	writeFiles(t, dir, map[string]string{
		"gwdev.yaml":   "render: [{command: \"touch MARKER; echo ---\"}]\n",
		"gateway.yaml": consentGateway,
	})
	for _, args := range [][]string{
		{"explain", dir, "http://example.com/"},
		{"graph", dir},
		{"migrate", dir},
		{"certs", dir},
		{"check", "-o", "yaml", dir},
	} {
		out, errOut, _ := runGwdev(t, "", args...)
		if exists(marker) {
			t.Fatalf("%v ran the render command without consent:\n%s%s", args, out, errOut)
		}
	}
	if _, _, _ = runGwdev(t, "", "graph", "--trust", dir); !exists(marker) {
		t.Fatal("graph --trust did not run the render command")
	}
}

// TestDiffDoesNotRunTheRevisionsRender: the compared revision's render
// command does not run, even when the working folder is trusted (the
// record never applies to a revision), and runs with --trust-revision.
func TestDiffDoesNotRunTheRevisionsRender(t *testing.T) {
	trustRecordIn(t)
	_, dir, git := gitRepoForTest(t)
	ran := filepath.Join(t.TempDir(), "ran.log")
	cfg := "render: [{command: \"pwd >> '" + ran + "'; echo ---\"}]\n"
	writeFiles(t, dir, map[string]string{"gwdev.yaml": cfg})
	git("add", ".")
	git("commit", "-q", "-m", "a render")
	writeFiles(t, dir, map[string]string{"routes.yaml": diffRoutes("", diffAPIService)})
	if _, errOut, code := runGwdev(t, "", "trust", dir); code != exitOK {
		t.Fatalf("gwdev trust: exit %d: %s", code, errOut)
	}
	out, errOut, code := runGwdev(t, "", "diff", "HEAD", dir)
	logged, _ := os.ReadFile(ran)
	real, _ := filepath.EvalSymlinks(dir)
	if lines := strings.Fields(string(logged)); len(lines) != 1 || (lines[0] != dir && lines[0] != real) {
		t.Fatalf("diff ran the render in %q; want only in the trusted working folder %s (exit %d)\n%s%s", lines, dir, code, out, errOut)
	}
	os.Remove(ran)
	out, errOut, code = runGwdev(t, "", "diff", "--trust-revision", "HEAD", dir)
	logged, _ = os.ReadFile(ran)
	if lines := strings.Fields(string(logged)); len(lines) != 2 || !strings.Contains(string(logged), "gwdev-diff-") {
		t.Fatalf("with --trust-revision the revision's render did not run: %q (exit %d)\n%s%s", lines, code, out, errOut)
	}
}

// TestUpRunsARenderOnlyWhileTrusted: up on a trusted folder runs its render;
// when gwdev.yaml changes to a new command, the record no longer applies:
// the new command does not run and up shows the problem naming it.
func TestUpRunsARenderOnlyWhileTrusted(t *testing.T) {
	trustRecordIn(t)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"gwdev.yaml":   "render: [{command: \"touch MARKER; echo ---\"}]\n",
		"gateway.yaml": strings.Replace(consentGateway, "port: 80", "port: "+strconv.Itoa(freePort(t)), 1),
	})
	if _, errOut, code := runGwdev(t, "", "trust", dir); code != exitOK {
		t.Fatalf("gwdev trust: exit %d: %s", code, errOut)
	}
	out := runUp(t, &upOptions{debounce: 10 * time.Millisecond, kustomize: true, noTUI: true}, dir)
	waitForUp(t, out, "the trusted render run", func() bool { return exists(filepath.Join(dir, "MARKER")) })
	waitForOutput(t, out, "gwdev: watching ")
	writeFiles(t, dir, map[string]string{"gwdev.yaml": "render: [{command: \"touch EVIL; echo ---\"}]\n"})
	waitForOutput(t, out, `not run: the command "touch EVIL; echo ---"`)
	if !strings.Contains(out.String(), "gwdev: render[0]: touch MARKER; echo --- (run once: its watch: list is empty)") {
		t.Errorf("up does not say the trusted command runs:\n%s", out)
	}
	if exists(filepath.Join(dir, "EVIL")) {
		t.Fatalf("up ran gwdev.yaml's new command, which nobody trusted:\n%s", out)
	}
}

// TestCIDocTrust runs the trusted job of docs/ci.md as printed on a folder
// whose gwdev.yaml has a render (in place of deploy/gateway): the render
// runs; and checks that no job of docs/ci.md triggered by pull_request
// passes --trust.
func TestCIDocTrust(t *testing.T) {
	trustRecordIn(t)
	b, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	type job struct {
		// On is the workflow's on: (YAML 1.1 reads the key as true).
		On   map[string]any `json:"true"`
		Jobs map[string]struct {
			Steps []struct {
				Run string `json:"run"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	var trusted []string
	blocks := strings.Split(string(b), "```yaml\n")
	for _, blk := range blocks[1:] {
		blk, _, _ = strings.Cut(blk, "```")
		var wf job
		if err := yaml.Unmarshal([]byte(blk), &wf); err != nil {
			t.Fatal(err)
		}
		if wf.On == nil {
			t.Fatalf("a workflow of docs/ci.md with no on: read\n%s", blk)
		}
		for _, j := range wf.Jobs {
			for _, s := range j.Steps {
				if !strings.Contains(s.Run, "--trust") {
					continue
				}
				if _, pr := wf.On["pull_request"]; pr {
					t.Errorf("a job run on pull requests passes --trust: %s", s.Run)
				}
				trusted = append(trusted, s.Run)
			}
		}
	}
	if len(trusted) == 0 {
		t.Fatal("docs/ci.md has no job with --trust")
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "MARKER")
	writeFiles(t, dir, map[string]string{
		"gwdev.yaml":   "render: [{command: \"touch MARKER; echo ---\"}]\n",
		"gateway.yaml": consentGateway,
	})
	for _, run := range trusted {
		args := strings.Fields(strings.ReplaceAll(run, "deploy/gateway", dir))
		if args[0] != "gwdev" {
			t.Fatalf("not a gwdev command: %s", run)
		}
		out, errOut, code := runGwdev(t, "", args[1:]...)
		if code != exitOK || !exists(marker) {
			t.Fatalf("%s: exit %d, render run %v\n%s%s", run, code, exists(marker), out, errOut)
		}
		os.Remove(marker)
		// The same step as a pull request runs it: nothing is run.
		out, errOut, code = runGwdev(t, "", slices.DeleteFunc(args[1:], func(a string) bool { return a == "--trust" })...)
		if code != exitProblems || exists(marker) {
			t.Fatalf("%s without --trust: exit %d, render run %v\n%s%s", run, code, exists(marker), out, errOut)
		}
	}
}

// TestCheckFetchesNoRemoteKustomizeResourceWithoutConsent: `gwdev check`
// on a folder whose kustomization names an http resource and a git URL
// sends no request and runs no git (a fake git first on PATH records
// runs); it exits 1 with a finding at each entry's line; --trust fetches.
func TestCheckFetchesNoRemoteKustomizeResourceWithoutConsent(t *testing.T) {
	trustRecordIn(t)
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Write([]byte(consentGateway))
	}))
	defer srv.Close()
	bin, ran := t.TempDir(), filepath.Join(t.TempDir(), "git-ran")
	writeFiles(t, bin, map[string]string{"git": "#!/bin/sh\necho \"$@\" >> '" + ran + "'\nexit 1\n"})
	if err := os.Chmod(filepath.Join(bin, "git"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"app/kustomization.yaml": "resources:\n- " + srv.URL + "/gateway.yaml\n- https://github.com/example/repo//base?ref=main\n",
	})
	out, errOut, code := runGwdev(t, "", "check", dir)
	if requests.Load() != 0 || exists(ran) {
		t.Fatalf("without consent: %d requests, git run %v", requests.Load(), exists(ran))
	}
	for _, want := range []string{"app/kustomization.yaml:2: resources: \"" + srv.URL + "/gateway.yaml\" is remote: not fetched",
		"app/kustomization.yaml:3: resources: \"https://github.com/example/repo//base?ref=main\" is remote: not fetched", "gwdev trust " + dir} {
		if code != exitProblems || !strings.Contains(out, want) {
			t.Fatalf("exit %d, want 1 and %q:\n%s%s", code, want, out, errOut)
		}
	}
	runGwdev(t, "", "check", "--trust", dir)
	if requests.Load() == 0 || !exists(ran) {
		t.Fatalf("with --trust: %d requests, git run %v; want kustomize to fetch as before", requests.Load(), exists(ran))
	}
}
