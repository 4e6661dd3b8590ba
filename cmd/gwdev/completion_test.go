package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

// complete runs `gwdev __complete args…` as a shell's completion script
// does and returns the completions and the directive.
func complete(t *testing.T, args ...string) ([]string, cobra.ShellCompDirective) {
	t.Helper()
	out, errOut, code := runGwdev(t, "", append([]string{cobra.ShellCompRequestCmd}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %q: exit %d: %s", args, code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	last := lines[len(lines)-1]
	d, err := strconv.Atoi(strings.TrimPrefix(last, ":"))
	if !strings.HasPrefix(last, ":") || err != nil {
		t.Fatalf("__complete %q: no directive in %q", args, out)
	}
	return lines[:len(lines)-1], cobra.ShellCompDirective(d)
}

// TestCompleteFormats: -o/--output and --format of every command complete
// to their closed sets, with no file names.
func TestCompleteFormats(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"check", "-o", ""}, []string{"summary", "yaml", "json", "github", "sarif"}},
		{[]string{"check", "--output", ""}, []string{"summary", "yaml", "json", "github", "sarif"}},
		{[]string{"check", "--format", ""}, []string{"summary", "yaml", "json", "github", "sarif"}},
		{[]string{"explain", "-o", ""}, []string{"text", "json"}},
		{[]string{"graph", "--format", ""}, []string{"mermaid", "dot", "svg", "png"}},
		{[]string{"diff", "--format", ""}, []string{"text", "github", "sarif", "json"}},
		{[]string{"migrate", "--format", ""}, []string{"text", "github", "json"}},
		{[]string{"test", "--format", ""}, []string{"human", "junit", "json", "github", "sarif"}},
	}
	for _, c := range cases {
		got, d := complete(t, c.args...)
		if !slices.Equal(got, c.want) || d != cobra.ShellCompDirectiveNoFileComp {
			t.Errorf("%q: %q %d, want %q %d", c.args, got, d, c.want, cobra.ShellCompDirectiveNoFileComp)
		}
	}
	// migrate -o is a file: the shell completes file names.
	if got, d := complete(t, "migrate", "-o", ""); len(got) != 0 || d != cobra.ShellCompDirectiveDefault {
		t.Errorf("migrate -o: %q %d, want file completion", got, d)
	}
}

// TestCompletedFormatsAreAccepted: every format completion offers is one
// the command takes, and the command refuses one it does not offer (the
// sets are the commands' own, not a stale copy).
func TestCompletedFormatsAreAccepted(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing")
	for cmd, flags := range outputFormats {
		for flag := range flags {
			args := []string{cmd, "--" + flag}
			if cmd == "explain" {
				args = append(args, "", "-d", missing, "http://a.example/")
			} else {
				args = append(args, "", missing)
			}
			values, _ := complete(t, cmd, "--"+flag, "")
			if len(values) == 0 {
				t.Errorf("%s --%s completes nothing", cmd, flag)
			}
			for _, v := range append(values, "bogus") {
				args[2] = v
				_, errOut, _ := runGwdev(t, "", args...)
				refused := strings.Contains(errOut, "unknown") && strings.Contains(errOut, `"`+v+`"`)
				if refused != (v == "bogus") {
					t.Errorf("gwdev %q: refused %v: %s", args, refused, errOut)
				}
			}
		}
	}
}

// TestCompleteCRDs: --crds completes the embedded bundles (gwdev crds
// list's), on every command that has it; a prefix narrows them.
func TestCompleteCRDs(t *testing.T) {
	for _, cmd := range []string{"check", "up", "explain", "graph", "diff", "migrate", "certs"} {
		got, d := complete(t, cmd, "--crds", "")
		if !slices.Equal(got, watch.CRDBundleNames()) || len(got) == 0 || d != cobra.ShellCompDirectiveNoFileComp {
			t.Errorf("%s --crds: %q %d, want %q", cmd, got, d, watch.CRDBundleNames())
		}
	}
	got, _ := complete(t, "check", "--crds", "v1.5")
	if len(got) != 2 || !slices.Contains(got, "v1.5.1-standard") || !slices.Contains(got, "v1.5.1-experimental") {
		t.Errorf("--crds v1.5: %q", got)
	}
	// Not a bundle: a file of kubectl get crd -o yaml, which the shell completes.
	if got, d := complete(t, "check", "--crds", "my-cluster"); len(got) != 0 || d != cobra.ShellCompDirectiveDefault {
		t.Errorf("--crds my-cluster: %q %d, want file completion", got, d)
	}
}

// TestCompleteProfiles: --profile completes CLASS= with the classes of
// the registered profiles, then every profile after the "=".
func TestCompleteProfiles(t *testing.T) {
	got, d := complete(t, "up", "--profile", "")
	if !slices.Equal(got, []string{"gwin-default="}) || d&cobra.ShellCompDirectiveNoSpace == 0 {
		t.Errorf("--profile '': %q %d", got, d)
	}
	got, _ = complete(t, "check", "--profile", "my-class=")
	var want []string
	for _, p := range engine.ProfileNames() {
		want = append(want, "my-class="+p)
	}
	if !slices.Equal(got, want) || !slices.Contains(got, "my-class=gwin") || !slices.Contains(got, "my-class=generic") {
		t.Errorf("--profile my-class=: %q, want %q", got, want)
	}
}

// TestCompleteContexts: --context lists the contexts of the kubeconfig
// --kubeconfig names, else $KUBECONFIG's.
func TestCompleteContexts(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, contexts ...string) string {
		y := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: https://127.0.0.1:1}\nusers:\n- name: u\n  user: {token: secret}\ncontexts:\n"
		for _, c := range contexts {
			y += "- name: " + c + "\n  context: {cluster: c, user: u}\n"
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(y+"current-context: "+contexts[0]+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := write("env.yaml", "kind-dev", "prod")
	flag := write("flag.yaml", "staging")
	t.Setenv("KUBECONFIG", env)
	for _, cmd := range []string{"check", "pull"} {
		if got, d := complete(t, cmd, "--context", ""); !slices.Equal(got, []string{"kind-dev", "prod"}) || d != cobra.ShellCompDirectiveNoFileComp {
			t.Errorf("%s --context with KUBECONFIG: %q %d", cmd, got, d)
		}
	}
	if got, _ := complete(t, "pull", "--kubeconfig", flag, "--context", ""); !slices.Equal(got, []string{"staging"}) {
		t.Errorf("--kubeconfig %s --context: %q", flag, got)
	}
}

// TestCompleteDirs: a positional DIR and --dir complete folders (the
// shell lists them); nothing past the last argument.
func TestCompleteDirs(t *testing.T) {
	for _, args := range [][]string{{"check", ""}, {"up", ""}, {"graph", ""}, {"migrate", ""}, {"certs", ""}, {"trust", ""},
		{"pull", ""}, {"explain", ""}, {"check", "--dir", ""}, {"pull", "--ca-dir", ""}} {
		if got, d := complete(t, args...); len(got) != 0 || d != cobra.ShellCompDirectiveFilterDirs {
			t.Errorf("%q: %q %d, want folders", args, got, d)
		}
	}
	for _, args := range [][]string{{"up", "samples/basic", ""}, {"explain", "samples/basic", ""}} {
		if got, d := complete(t, args...); len(got) != 0 || d != cobra.ShellCompDirectiveNoFileComp {
			t.Errorf("%q: %q %d, want nothing", args, got, d)
		}
	}
}

// TestVersionFlag: gwdev --version prints what gwdev version prints.
func TestVersionFlag(t *testing.T) {
	old := version
	defer func() { version = old }()
	version = "v9.9.9"
	want, _, _ := runGwdev(t, "", "version")
	got, errOut, code := runGwdev(t, "", "--version")
	if code != 0 || got != want || !strings.HasPrefix(got, "gwdev v9.9.9") {
		t.Errorf("--version: exit %d %q %s, want %q", code, got, errOut, want)
	}
}

// TestWrongArgumentsPrintUsage: too many or too few arguments say what
// the command takes and exit 2, as an unknown flag does.
func TestWrongArgumentsPrintUsage(t *testing.T) {
	cases := []struct {
		args      []string
		use, path string
	}{
		{[]string{"up", "a", "b"}, "usage: gwdev up [DIR] [flags]", "gwdev up"},
		{[]string{"migrate"}, "usage: gwdev migrate DIR [flags]", "gwdev migrate"},
		{[]string{"explain"}, "usage: gwdev explain [DIR] URL [flags]", "gwdev explain"},
		{[]string{"version", "x"}, "usage: gwdev version [flags]", "gwdev version"},
		{[]string{"crds", "list", "x"}, "usage: gwdev crds list [flags]", "gwdev crds list"},
	}
	for _, c := range cases {
		_, errOut, code := runGwdev(t, "", c.args...)
		help := "run '" + c.path + " --help'"
		if code != exitUsage || !strings.Contains(errOut, c.use) || !strings.Contains(errOut, help) || !strings.Contains(errOut, "arg") {
			t.Errorf("gwdev %q: exit %d, stderr %q, want %q and %q", c.args, code, errOut, c.use, help)
		}
	}
	if _, errOut, code := runGwdev(t, "", "--no-such-flag"); code != exitUsage {
		t.Errorf("unknown flag: exit %d %s", code, errOut)
	}
}
