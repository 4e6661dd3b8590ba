package watch

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// fakeGit puts first on PATH a `git` that records being run (in the file
// it returns) and fails.
func fakeGit(t *testing.T) (ran string) {
	t.Helper()
	bin := t.TempDir()
	ran = filepath.Join(t.TempDir(), "git-ran")
	script := "#!/bin/sh\necho \"$@\" >> '" + ran + "'\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return ran
}

// TestKustomizeRemoteIsNotFetchedWithoutConsent: a kustomization naming an
// http(s) resource or a git URL (in an overlay and in a base it reaches)
// fetches nothing (the server sees no request, git is never run); each
// entry is a problem at its file:line saying how to allow it; the folder's
// other files still load. With consent kustomize fetches as before.
func TestKustomizeRemoteIsNotFetchedWithoutConsent(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Write([]byte(strings.Replace(renderRoute, "%s", "remote", 1)))
	}))
	defer srv.Close()
	ran := fakeGit(t)
	for _, tc := range []struct {
		name  string
		files map[string]string
		// want are the problems' file:line and entry.
		want []string
	}{
		{"http", map[string]string{
			"app/kustomization.yaml": "resources:\n- route.yaml\n- " + srv.URL + "/remote.yaml\n",
		}, []string{"app/kustomization.yaml:3 " + srv.URL + "/remote.yaml"}},
		{"git in a base", map[string]string{
			"app/kustomization.yaml":  "resources: [../base]\n",
			"base/kustomization.yaml": "resources:\n- route.yaml\n- https://github.com/example/repo//base?ref=main\n",
		}, []string{"base/kustomization.yaml:3 https://github.com/example/repo//base?ref=main"}},
		{"scp and github.com and a patch", map[string]string{
			"app/kustomization.yaml": "resources:\n- git@github.com:example/repo.git\n" +
				"components:\n- github.com/example/repo/component\n" +
				"patches:\n- path: " + srv.URL + "/patch.yaml\n",
		}, []string{"app/kustomization.yaml:2 git@github.com:example/repo.git", "app/kustomization.yaml:4 github.com/example/repo/component",
			"app/kustomization.yaml:6 " + srv.URL + "/patch.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := map[string]string{
				"app/route.yaml":  strings.Replace(renderRoute, "%s", "app", 1),
				"base/route.yaml": strings.Replace(renderRoute, "%s", "base", 1),
				"other.yaml":      "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: web}\nspec:\n  gatewayClassName: gwdev\n  listeners: [{name: http, protocol: HTTP, port: 80}]\n",
			}
			for k, v := range tc.files {
				files[k] = v
			}
			writeTree(t, dir, files)
			res := newTestLoader(t).Load(dir, Sources{Remote: Consent{Hint: "run `gwdev trust DIR`"}})
			if n := requests.Load(); n != 0 {
				t.Fatalf("the server got %d requests", n)
			}
			if _, err := os.Stat(ran); err == nil {
				data, _ := os.ReadFile(ran)
				t.Fatalf("git was run: %s", data)
			}
			var got []string
			for _, p := range res.Problems {
				if p.Kind != ProblemNotAllowed || !strings.Contains(p.Message, "gwdev trust DIR") || !strings.Contains(p.Message, "not fetched") {
					t.Errorf("problem %v; want NotAllowed ones saying not fetched and how to allow it", p)
					continue
				}
				rel, _ := filepath.Rel(dir, p.File)
				entry := p.Message[strings.Index(p.Message, `"`)+1:]
				got = append(got, rel+":"+strconv.Itoa(p.Line)+" "+entry[:strings.Index(entry, `"`)])
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if len(res.Snapshot.Gateways) != 1 {
				t.Errorf("the folder's other file did not load: %d Gateways", len(res.Snapshot.Gateways))
			}
		})
	}

	t.Run("with consent", func(t *testing.T) {
		dir := t.TempDir()
		writeTree(t, dir, map[string]string{
			"app/kustomization.yaml": "resources:\n- " + srv.URL + "/remote.yaml\n- https://github.com/example/repo//base?ref=main\n",
		})
		res := newTestLoader(t).Load(dir, Sources{Remote: Consent{Given: true}})
		if requests.Load() == 0 {
			t.Error("with consent, the remote resource was not fetched")
		}
		if _, err := os.Stat(ran); err != nil {
			t.Errorf("with consent, git was not run (problems %v)", res.Problems)
		}
		for _, p := range res.Problems {
			if p.Kind == ProblemNotAllowed {
				t.Errorf("with consent: %v", p)
			}
		}
	})
}

// TestIsRemoteRef: what kustomize would fetch is remote, a local path is
// not.
func TestIsRemoteRef(t *testing.T) {
	for s, want := range map[string]bool{
		"http://example.com/x.yaml": true, "HTTPS://example.com/x": true, "ssh://git@host/x": true, "file:///tmp/repo": true,
		"git::https://host/x": true, "git@github.com:org/repo": true, "github.com/org/repo/base": true, "GitHub.com:org/repo": true,
		"base": false, "../base": false, "route.yaml": false, "./x@y/z": false, "": false, "key=value.txt": false,
		"apiVersion: builtin\nkind: X\n": false,
	} {
		if got := isRemoteRef(s); got != want {
			t.Errorf("isRemoteRef(%q) = %v, want %v", s, got, want)
		}
	}
}
