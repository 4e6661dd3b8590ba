package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/report"
)

const diffGateway = `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  listeners: [{name: http, protocol: HTTP, port: 80}]
`

// diffRoutes is the routes file: app points at Service api (missing at
// first), web serves /; web's parentRef section and an extra route are
// the knobs the commits turn.
func diffRoutes(section, extra string) string {
	s := `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: app, creationTimestamp: "2026-01-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs: [{name: api, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: web}
spec:
  parentRefs: [{name: gw` + section + `}]
  rules:
  - backendRefs: [{name: web, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  ports: [{port: 80}]
`
	return s + extra
}

const diffAPIService = `---
apiVersion: v1
kind: Service
metadata: {name: api}
spec:
  ports: [{port: 80}]
`

// diffShadowing is a newer route whose only rule /api the older app route
// already takes.
const diffShadowing = `---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: api-v2, creationTimestamp: "2026-03-01T00:00:00Z"}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /api}}]
    backendRefs: [{name: api, port: 80}]
`

// gitRepoForTest makes a repository with the manifests under manifests/:
// main has a route with a missing backend; branch feature fixes it (commit
// "fix") and then breaks web's parentRef and adds a shadowed route (commit
// "regression").
func gitRepoForTest(t *testing.T) (repo, dir string, git func(args ...string)) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo = t.TempDir()
	dir = filepath.Join(repo, "manifests")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	git = func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("init", "-q", "-b", "main")
	write("gateway.yaml", diffGateway)
	write("routes.yaml", diffRoutes("", ""))
	git("add", ".")
	git("commit", "-q", "-m", "base: app's backend is missing")
	git("checkout", "-q", "-b", "feature")
	write("routes.yaml", diffRoutes("", diffAPIService))
	git("commit", "-q", "-am", "fix: add Service api")
	write("routes.yaml", diffRoutes(", sectionName: nope", diffAPIService+diffShadowing))
	git("commit", "-q", "-am", "regression: web's parentRef names no listener; api-v2 is shadowed")
	return repo, dir, git
}

func TestDiffGitRepository(t *testing.T) {
	_, dir, git := gitRepoForTest(t)

	// Default BASE: the merge base with main, the commit before the fix.
	out, errOut, code := runGwdev(t, "", "diff", dir)
	if code != exitProblems {
		t.Fatalf("diff: exit %d, want %d\n%s%s", code, exitProblems, out, errOut)
	}
	for _, want := range []string{
		"(merge base with main)",
		// The regression: web's parentRef no longer attaches, so it loses traffic.
		"manifests/routes.yaml:10  HTTPRoute/default/web  parent Gateway default/gw/nope",
		"Accepted is False (NoMatchingParent) (new status entry): no listener matches Gateway default/gw sectionName \"nope\"",
		"HTTPRoute/default/web no longer receives traffic on Gateway default/gw listener \"http\" host \"*\"",
		// The new route is added, and shadowed: a new warning.
		"+ HTTPRoute/default/api-v2  manifests/routes.yaml:",
		"new warning: HTTPRoute default/api-v2 rules[0].matches[0] (PathPrefix /api) never receives a request",
		// The fix.
		"HTTPRoute/default/app  parent Gateway default/gw",
		"ResolvedRefs: False (BackendNotFound) → True (ResolvedRefs)",
		"+ Service/default/api",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff output lacks %q:\n%s", want, out)
		}
	}
	worse := out[strings.Index(out, "Worse:"):strings.Index(out, "Better:")]
	if strings.Contains(worse, "ResolvedRefs") || !strings.Contains(out[strings.Index(out, "Better:"):], "ResolvedRefs") {
		t.Errorf("the fix is not listed under Better:\n%s", out)
	}

	// Against the fix commit, only the regression remains.
	out, _, code = runGwdev(t, "", "diff", "HEAD~1", dir)
	if code != exitProblems || strings.Contains(out, "Better:") || !strings.Contains(out, "NoMatchingParent") {
		t.Errorf("diff HEAD~1: exit %d, want only the regression:\n%s", code, out)
	}

	// Nothing changed since HEAD.
	out, _, code = runGwdev(t, "", "diff", "HEAD", dir)
	if code != 0 || !strings.Contains(out, "No status changes.") {
		t.Errorf("diff HEAD: exit %d:\n%s", code, out)
	}

	// An uncommitted change in the working tree counts: undoing the
	// regression leaves only improvements against main.
	if err := os.WriteFile(filepath.Join(dir, "routes.yaml"), []byte(diffRoutes("", diffAPIService)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code = runGwdev(t, "", "diff", dir)
	if code != 0 || strings.Contains(out, "Worse:") || !strings.Contains(out, "ResolvedRefs: False (BackendNotFound) → True") {
		t.Errorf("diff with the regression undone in the working tree: exit %d:\n%s", code, out)
	}
	git("checkout", "-q", "--", ".")

	// A repository whose main branch is called master.
	git("branch", "-m", "main", "master")
	out, _, code = runGwdev(t, "", "diff", dir)
	if code != exitProblems || !strings.Contains(out, "(merge base with master)") {
		t.Errorf("diff with master: exit %d:\n%s", code, out)
	}
}

// githubCommand is the documented workflow command syntax:
// ::level key=value,key=value::message, with no raw newline, and no raw
// ',' or ':' inside a property value.
var githubCommand = regexp.MustCompile(`^::(error|warning|notice) (file=[^,:%]*(%[0-9A-F]{2}[^,:%]*)*,line=[0-9]+,)?title=[^,:%]*(%[0-9A-F]{2}[^,:%]*)*::[^\r\n]*$`)

func TestDiffGitHubFormat(t *testing.T) {
	_, dir, _ := gitRepoForTest(t)
	out, _, code := runGwdev(t, "", "diff", "--format", "github", dir)
	if code != exitProblems {
		t.Fatalf("exit %d, want %d:\n%s", code, exitProblems, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	levels := map[string]int{}
	for _, l := range lines[:len(lines)-1] {
		if !githubCommand.MatchString(l) {
			t.Errorf("not a workflow command: %q", l)
		}
		levels[strings.SplitN(l[2:], " ", 2)[0]]++
	}
	if levels["error"] < 2 || levels["warning"] != 1 || levels["notice"] < 3 {
		t.Errorf("levels %v, want ≥2 errors (condition, traffic), 1 warning (shadowed), ≥3 notices:\n%s", levels, out)
	}
	if !strings.Contains(out, "::error file=manifests/routes.yaml,line=10,title=gwdev%3A HTTPRoute/default/web parent Gateway default/gw/nope::Accepted is False (NoMatchingParent) (new status entry)") {
		t.Errorf("no annotation for the regression at manifests/routes.yaml:10:\n%s", out)
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "gwdev diff: 3 worse, 1 better,") {
		t.Errorf("summary line %q", last)
	}
}

func TestDiffJSON(t *testing.T) {
	_, dir, _ := gitRepoForTest(t)
	out, _, code := runGwdev(t, "", "diff", "--format", "json", "HEAD~1", dir)
	if code != exitProblems {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	var rep report.DiffReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if rep.Worse != 3 || rep.Better != 0 || len(rep.Base) != 40 || rep.BaseRef != "HEAD~1" {
		t.Errorf("worse %d better %d base %q ref %q, want 3, 0, a commit, HEAD~1", rep.Worse, rep.Better, rep.Base, rep.BaseRef)
	}
	kinds := map[string]bool{}
	for _, c := range rep.Changes {
		if c.Worse {
			kinds[c.Change] = true
		}
	}
	for _, k := range []string{"condition", "traffic", "finding"} {
		if !kinds[k] {
			t.Errorf("no worse %s change in %+v", k, rep.Changes)
		}
	}
}

func TestDiffUsage(t *testing.T) {
	_, dir, _ := gitRepoForTest(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", "--format", "xml"}, "unknown format"},
		{[]string{"diff", "no-such-revision-xyz", dir}, `BASE "no-such-revision-xyz" is not a git revision`},
		{[]string{"diff", "HEAD", t.TempDir()}, "is not in a git work tree"},
	} {
		_, errOut, code := runGwdev(t, "", c.args...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", c.args, code, exitUsage, errOut, c.want)
		}
	}
}

// TestDiffSymlinks: a manifest symlinked from elsewhere in the repository
// loads the same at the base (the whole tree is extracted), so an
// unchanged repository has no changes, not a file that stopped loading.
func TestDiffSymlinks(t *testing.T) {
	repo, dir, git := gitRepoForTest(t)
	shared := filepath.Join(repo, "shared")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, "api.yaml"), []byte(strings.ReplaceAll(diffAPIService[4:], "name: api", "name: shared-api")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../shared/api.yaml", filepath.Join(dir, "api.yaml")); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-q", "-m", "symlinked Service")
	out, _, code := runGwdev(t, "", "diff", "HEAD", dir)
	if code != 0 || !strings.Contains(out, "No status changes.") {
		t.Errorf("diff HEAD with a symlinked manifest: exit %d:\n%s", code, out)
	}
	// A load problem that names files reads the same in both trees.
	if err := os.WriteFile(filepath.Join(shared, "api.yaml"), []byte(diffAPIService[4:]), 0o644); err != nil {
		t.Fatal(err)
	}
	git("commit", "-q", "-am", "the symlinked file redefines Service api")
	out, _, code = runGwdev(t, "", "diff", "HEAD", dir)
	if code != 0 || !strings.Contains(out, "No status changes.") {
		t.Errorf("diff HEAD with a load problem naming a file: exit %d:\n%s", code, out)
	}
}

// TestDiffNeverWritesOutsideItsFolder: a commit whose tree holds "x" as a
// symlink to a directory elsewhere and "x/pwn.yaml" as a file (git mktree
// makes one; a fetch brings one) must not make gwdev diff create or truncate
// a file through the symlink; "X" a symlink beside "x/f" (one name on a
// case-insensitive filesystem) neither; and a symlink pointing outside the
// repository is not followed. The blobs are read with git itself, never
// through a work tree.
func TestDiffNeverWritesOutsideItsFolder(t *testing.T) {
	repo, dir, _ := gitRepoForTest(t)
	outside := t.TempDir()
	victim := filepath.Join(outside, "pwn.yaml")
	if err := os.WriteFile(victim, []byte("keep me\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git, blob := gitPlumbing(t, repo)
	link := blob(outside)
	pwn := blob("kind: Secret\n")
	sub := git("100644 blob "+pwn+"\tpwn.yaml\n", "mktree")
	manifests := git("", "rev-parse", "HEAD:manifests")
	top := git(strings.Join([]string{
		"040000 tree " + manifests + "\tmanifests",
		"120000 blob " + link + "\tx",
		"040000 tree " + sub + "\tx",
		"120000 blob " + link + "\tY",
		"040000 tree " + sub + "\ty",
		"120000 blob " + link + "\tmanifests-out",
	}, "\n")+"\n", "mktree")
	commit := git("", "commit-tree", top, "-m", "hostile tree")
	_, errOut, _ := runGwdev(t, "", "diff", commit, dir)
	for _, want := range []string{"symlink x → " + outside + " left out", "symlink Y → " + outside + " left out"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "keep me\n" {
		t.Errorf("gwdev diff wrote through a symlink of the tree: %s is now %q (%v)", victim, b, err)
	}
	ents, _ := os.ReadDir(outside)
	if len(ents) != 1 {
		t.Errorf("gwdev diff created files outside its folder: %v", ents)
	}
}

// TestDiffExtractChainedSymlinks: a symlink whose text stays inside but
// that resolves outside through another symlink of the tree ("s/../x"
// where s is "../..") is left out; one that resolves inside is kept.
func TestDiffExtractChainedSymlinks(t *testing.T) {
	repo, _, _ := gitRepoForTest(t)
	git, blob := gitPlumbing(t, repo)
	q := git("120000 blob "+blob("../..")+"\ts\n120000 blob "+blob("s/../x")+"\tl\n120000 blob "+blob("s/manifests")+"\tok\n", "mktree")
	p := git("040000 tree "+q+"\tq\n", "mktree")
	top := git("040000 tree "+git("", "rev-parse", "HEAD:manifests")+"\tmanifests\n040000 tree "+p+"\tp\n", "mktree")
	commit := git("", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit-tree", top, "-m", "chained")
	base := t.TempDir()
	tmp := filepath.Join(base, "tree")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(base, "x"), 0o755); err != nil { // what l would reach
		t.Fatal(err)
	}
	_, left, err := app.ExtractTree(filepath.Join(repo, "manifests"), commit, tmp)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || !strings.Contains(left[0], "symlink p/q/l → s/../x left out: it resolves outside") {
		t.Errorf("left out %q, want p/q/l only", left)
	}
	if _, err := os.Lstat(filepath.Join(tmp, "p", "q", "l")); err == nil {
		t.Errorf("p/q/l was kept")
	}
	if st, err := os.Stat(filepath.Join(tmp, "p", "q", "ok")); err != nil || !st.IsDir() {
		t.Errorf("p/q/ok (inside) was not kept: %v", err)
	}
}

// TestDiffExtractNameTwice: a tree holding one name twice — what a
// case-insensitive filesystem makes of "Routes.yaml" beside "routes.yaml",
// or of a file "X" beside a folder "x" — keeps the first and leaves the
// other out, saying so, instead of failing the whole diff; nothing is
// written over.
func TestDiffExtractNameTwice(t *testing.T) {
	repo, dir, _ := gitRepoForTest(t)
	git, blob := gitPlumbing(t, repo)
	gw, other := git("", "rev-parse", "HEAD:manifests/gateway.yaml"), blob("# not the gateway\n")
	routes := git("", "rev-parse", "HEAD:manifests/routes.yaml")
	sub := git("100644 blob "+blob("# inside\n")+"\tf.yaml\n", "mktree")
	manifests := git("100644 blob "+gw+"\tgateway.yaml\n100644 blob "+other+"\tgateway.yaml\n100644 blob "+routes+"\troutes.yaml\n"+
		"100644 blob "+other+"\tx\n040000 tree "+sub+"\tx\n", "mktree")
	top := git("040000 tree "+manifests+"\tmanifests\n", "mktree")
	commit := git("", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit-tree", top, "-m", "one name twice")
	out, errOut, code := runGwdev(t, "", "diff", commit, dir)
	if code == exitUsage {
		t.Fatalf("diff failed on a tree holding a name twice: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"manifests/gateway.yaml left out: ", "manifests/x/f.yaml left out: "} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(out, "Gateway/default/gw") && strings.Contains(out, "removed") {
		t.Errorf("the first gateway.yaml was written over:\n%s", out)
	}
}

// gitPlumbing runs git in repo with stdin (for mktree and hash-object),
// without the user's git configuration, and returns its trimmed output;
// blob writes a blob and returns its id.
func gitPlumbing(t *testing.T, repo string) (git func(stdin string, args ...string) string, blob func(string) string) {
	git = func(stdin string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Stdin = strings.NewReader(stdin)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	return git, func(s string) string { return git(s, "hash-object", "-w", "--stdin") }
}
