package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The documentation a newcomer reads is README.md and docs/**/*.md. Every
// command shown in a fenced code block there runs as printed
// (TestDocsCommands), or is listed in docsNotRun with the reason it
// cannot run in a test; README.md stays a quickstart (TestReadmeShape);
// every command has a page and every link leads somewhere
// (TestDocsPagesAndLinks).

// docFiles is README.md and every Markdown file under docs/, relative to
// the repository root, README.md first.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(repoRoot, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files[1:])
	return files
}

// docCommand is one command shown in a doc page's code block.
type docCommand struct {
	file string
	line int
	// text is the command as printed (continuation lines joined, a
	// trailing "# comment" and a leading "$ " removed).
	text string
	// output is what the page shows the command printing: the lines
	// after a "$ " command up to the next one (nil: none shown).
	output []string
	// workflow: a `run:` line of a GitHub Actions workflow shown as YAML.
	workflow bool
}

var (
	fenceOpen   = regexp.MustCompile("^(\\s*)```+\\s*([A-Za-z0-9_-]*)")
	workflowRun = regexp.MustCompile(`^\s*(?:- )?run:\s+(.+)$`)
	// workflowExpr is a GitHub Actions expression, one word once evaluated.
	workflowExpr = regexp.MustCompile(`\$\{\{[^}]*\}\}`)
)

// stripComment removes a shell comment ("  # …") from a command line,
// leaving "#" inside quotes and words (${fpath[1]}, #anchor) alone.
func stripComment(s string) string {
	quote := rune(0)
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			return strings.TrimRight(s[:i], " \t")
		}
	}
	return strings.TrimRight(s, " \t")
}

// docCommands reads the commands of one page: in a block marked sh, bash,
// shell or console every line that is not a comment (or, when the block
// has "$ " lines, those lines, the others being their output); in a block
// without a language only "$ " lines; in a YAML block the `run:` lines of
// a workflow.
func docCommands(t *testing.T, file string) []docCommand {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var out []docCommand
	for i := 0; i < len(lines); i++ {
		m := fenceOpen.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		lang, start := m[2], i+1
		end := start
		for end < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[end]), "```") {
			end++
		}
		block := lines[start:min(end, len(lines))]
		i = end
		dollar := slices.ContainsFunc(block, func(l string) bool { return strings.HasPrefix(l, "$ ") })
		switch {
		case lang == "yaml" || lang == "yml":
			for j, l := range block {
				if r := workflowRun.FindStringSubmatch(l); r != nil && !strings.HasPrefix(strings.TrimSpace(r[1]), "|") {
					out = append(out, docCommand{file: file, line: start + j + 1, text: stripComment(r[1]), workflow: true})
				}
			}
		case dollar && (lang == "" || lang == "sh" || lang == "bash" || lang == "shell" || lang == "console"):
			for j := 0; j < len(block); j++ {
				if !strings.HasPrefix(block[j], "$ ") {
					continue
				}
				c := docCommand{file: file, line: start + j + 1, text: stripComment(strings.TrimPrefix(block[j], "$ ")), output: []string{}}
				for j+1 < len(block) && !strings.HasPrefix(block[j+1], "$ ") {
					j++
					c.output = append(c.output, block[j])
				}
				out = append(out, c)
			}
		case lang == "sh" || lang == "bash" || lang == "shell" || lang == "console":
			for j := 0; j < len(block); j++ {
				l := strings.TrimSpace(block[j])
				if l == "" || strings.HasPrefix(l, "#") {
					continue
				}
				c := docCommand{file: file, line: start + j + 1}
				for strings.HasSuffix(l, "\\") && j+1 < len(block) {
					j++
					l = strings.TrimSuffix(l, "\\") + " " + strings.TrimSpace(block[j])
				}
				c.text = stripComment(l)
				out = append(out, c)
			}
		}
	}
	return out
}

// docsNotRun lists the commands the docs show that a test cannot run as
// printed, each with why. Every `gwdev` command in them (and every make
// target) is still checked: the command exists, its flags parse, its
// arguments are of the right number and a samples/ folder it names
// exists.
var docsNotRun = []struct {
	re     *regexp.Regexp
	reason string
}{
	{regexp.MustCompile(`^make (up|check)\b`), "runs gwdev up (until ctrl-c) or check on a sample, as the gwdev lines of these pages do"},
	{regexp.MustCompile(`^make screenshots\b`), "drives headless Chromium to write docs/images; TestWebViewInBrowser drives the same pages"},
	{regexp.MustCompile(`^bench/`), "a benchmark of minutes to an hour under wrk load, not a test's work"},
	{regexp.MustCompile(`^make (test|build|fuzz|bench|conformance|release|tools|vet|lint)\b`), "builds or tests the whole repository: it is what CI runs (.ci/run), not a test's work"},
	{regexp.MustCompile(`^bench/[a-z]+\.sh\b`), "builds gwdev (and the revision it compares with) and measures for minutes on an idle machine, not a test's work"},
	{regexp.MustCompile(`^(GOTOOLCHAIN=\S+ )?go (install|build|test|run)\b`), "builds, installs or tests from the module proxy or the repository; make test runs the same"},
	{regexp.MustCompile(`^gwdev up\b`), "serves until ctrl-c on the ports it prints (tests take free ports); TestUp* and the samples' tests serve every sample"},
	{regexp.MustCompile(`^gwdev lsp\b`), "speaks the Language Server Protocol on stdin and stdout until the editor ends it; TestLSPInNeovim runs it under Neovim, internal/lsp's tests over pipes"},
	{regexp.MustCompile(`^gwdev (pull|check --cluster)\b`), "needs a cluster in your kubeconfig; cluster_test.go runs both against a real kube-apiserver"},
	{regexp.MustCompile(`^gwdev diff( --format github)? deploy\b`), "runs in a repository with a deploy/ folder (docs/ci.md's example); diff_test.go runs diff on git repositories"},
	{regexp.MustCompile(`^(curl|grpcurl|nc|openssl|ncat)\b`), "sends a request to a running gwdev up; the samples' tests (samples_*_test.go) send these"},
	{regexp.MustCompile(`^(kubectl|helm|docker|tail|sha256sum|brew|apt-get)\b`), "needs a cluster, a container engine, a download or a running gwdev up, none of which a test has"},
	{regexp.MustCompile(`^gwdev completion (zsh|fish) > `), "writes into your shell's completion folder; TestCompletionScripts runs gwdev completion for every shell"},
	{regexp.MustCompile(`^source <\(gwdev completion bash\)`), "changes the running shell and needs the bash-completion package; TestCompletionScripts runs gwdev completion bash"},
	{regexp.MustCompile(`^echo \$\?`), "prints the exit status of the command shown before it"},
	{regexp.MustCompile(`^gwdev check --crds cluster-crds\.yaml`), "reads the CRDs that kubectl got from your cluster on the line before"},
}

// docsNeeds are the programs some commands need besides gwdev: without
// them the command is checked but not run, and the test says so.
var docsNeeds = []struct {
	re      *regexp.Regexp
	program string
}{
	{regexp.MustCompile(`^gwdev graph --format (svg|png)\b`), "dot"}, // TestGraphSVGWithoutGraphviz tests what it says without
}

// docsRunnable are the commands besides gwdev that the docs may show and
// this test runs as printed: they prepare a folder for the gwdev line after
// them.
var docsRunnable = regexp.MustCompile(`^(cp|mkdir) `)

func notRunReason(text string) string {
	for _, n := range docsNotRun {
		if n.re.MatchString(text) {
			return n.reason
		}
	}
	return ""
}

// gwdevInvocations returns the gwdev commands in a shell line: the line
// itself, the parts of a pipeline and what $( ) and <( ) run, each cut at
// a redirection.
func gwdevInvocations(text string) [][]string {
	var out [][]string
	for _, part := range regexp.MustCompile(`\|\||&&|[|;]|\$\(|<\(`).Split(text, -1) {
		part = strings.TrimSpace(part)
		if i := strings.IndexAny(part, "<>)"); i >= 0 {
			part = part[:i]
		}
		words := shellWords(strings.Join(strings.Fields(part), " "))
		if len(words) > 0 && words[0] == "gwdev" {
			out = append(out, words)
		}
	}
	return out
}

// checkInvocation checks a gwdev command without running it: the command
// exists, its flags parse, it takes that many arguments and every
// samples/ path it names exists.
func checkInvocation(words []string) string { return checkWords(words, false) }

// checkWords is checkInvocation; for a command named in prose (`gwdev
// explain`, `gwdev check --now`) arguments and flag values may be left out.
func checkWords(words []string, prose bool) string {
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	cmd, rest, err := root.Find(words[1:])
	if err != nil {
		return err.Error()
	}
	if cmd == root {
		// gwdev's own flags (--version, --help) and nothing else
		if len(rest) == 0 || !strings.HasPrefix(rest[0], "-") {
			return "not a gwdev command"
		}
		if err := root.ParseFlags(rest); err != nil && !errors.Is(err, pflag.ErrHelp) {
			return err.Error()
		}
		if len(root.Flags().Args()) > 0 {
			return "not a gwdev command"
		}
		return ""
	}
	if err := cmd.ParseFlags(rest); errors.Is(err, pflag.ErrHelp) {
		return ""
	} else if err != nil && !(prose && strings.HasPrefix(err.Error(), "flag needs an argument")) {
		return err.Error()
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil && !prose {
		return err.Error()
	}
	for _, w := range words[1:] {
		if strings.HasPrefix(w, "samples/") {
			if _, err := os.Stat(filepath.Join(repoRoot, w)); err != nil {
				return "no " + w + " in the repository"
			}
		}
	}
	return ""
}

// makeTargets are the targets the Makefile defines.
func makeTargets(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`(?m)^([a-z][a-z0-9_-]*):`).FindAllStringSubmatch(string(data), -1) {
		out = append(out, m[1])
	}
	return out
}

// docsSandbox is a folder to run the docs' commands in, as from a clone's
// root: a copy of samples/ in a git repository on branch main with two
// commits (gwdev diff has a base), a gwdev binary first on PATH, and a
// HOME of its own (gwdev certs writes its CA there).
func docsSandbox(t *testing.T) (dir string, env []string) {
	t.Helper()
	dir = t.TempDir()
	bin := filepath.Join(dir, ".bin")
	if out, err := exec.Command("go", "build", "-o", filepath.Join(bin, "gwdev"), ".").CombinedOutput(); err != nil {
		t.Fatalf("building gwdev: %v\n%s", err, out)
	}
	if err := os.CopyFS(filepath.Join(dir, "samples"), os.DirFS(filepath.Join(repoRoot, "samples"))); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, ".home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "KUBECONFIG="+filepath.Join(home, "no-kubeconfig"),
		"GIT_AUTHOR_NAME=docs", "GIT_AUTHOR_EMAIL=docs@example.com", "GIT_COMMITTER_NAME=docs",
		"GIT_COMMITTER_EMAIL=docs@example.com", "GIT_CONFIG_GLOBAL=/dev/null")
	git := func(args ...string) {
		c := exec.Command("git", args...)
		c.Dir, c.Env = dir, env
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".bin/\n.home/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", ".")
	git("commit", "-q", "-m", "samples")
	f, err := os.OpenFile(filepath.Join(dir, "samples", "basic", "app.yaml"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("# a second commit, so that HEAD~1 exists\n")
	if err := errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
	git("commit", "-q", "-am", "a comment")
	return dir, env
}

// shellError is bash's own complaint (a redirection to a folder that does
// not exist, a command not found), which exits 1 like a gwdev finding.
var shellError = regexp.MustCompile(`(?m)^bash: `)

// docDurations are timings in gwdev's output, which differ from run to run.
var docDurations = regexp.MustCompile(`[0-9]+(\.[0-9]+)?(ns|µs|us|ms|s)\b`)

func docNormalise(s string) string {
	return strings.Join(strings.Fields(docDurations.ReplaceAllString(s, "T")), " ")
}

// TestDocsCommands runs every command of README.md and docs/**/*.md as
// printed, from a sandbox laid out like a clone: it must exit 0 or 1 (2 is
// a usage error: an unknown flag, a folder that does not exist), and what
// a "$ " example shows it printing must be in its output (a "…" cuts a
// line; timings may differ). A command that cannot run in a test must be
// listed in docsNotRun with the reason; its gwdev invocations are checked
// without running them.
func TestDocsCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds gwdev and runs every command of the docs")
	}
	targets := makeTargets(t)
	var cmds []docCommand
	for _, f := range docFiles(t) {
		cmds = append(cmds, docCommands(t, f)...)
	}
	dir, env := docsSandbox(t)
	ran, checked := 0, 0
	for _, c := range cmds {
		where := c.file + ":" + strconv.Itoa(c.line)
		for _, words := range gwdevInvocations(workflowExpr.ReplaceAllString(c.text, "main")) {
			if bad := checkInvocation(words); bad != "" {
				t.Errorf("%s: %s: %s", where, c.text, bad)
			}
		}
		if m := regexp.MustCompile(`^make ([a-z][a-z0-9_-]*)`).FindStringSubmatch(c.text); m != nil && !slices.Contains(targets, m[1]) {
			t.Errorf("%s: %s: the Makefile has no target %q", where, c.text, m[1])
		}
		if c.workflow || notRunReason(c.text) != "" {
			checked++
			continue
		}
		if !strings.HasPrefix(c.text, "gwdev ") && !strings.Contains(c.text, "| gwdev ") && !docsRunnable.MatchString(c.text) {
			t.Errorf("%s: %q is neither run by this test nor listed in docsNotRun with the reason it cannot run", where, c.text)
			continue
		}
		missing := ""
		for _, n := range docsNeeds {
			if _, err := exec.LookPath(n.program); n.re.MatchString(c.text) && err != nil {
				missing = n.program
			}
		}
		if missing != "" {
			t.Logf("%s: %s: not run: %s is not installed", where, c.text, missing)
			checked++
			continue
		}
		ran++
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		sh := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", c.text)
		sh.Dir, sh.Env = dir, env
		var outb bytes.Buffer
		sh.Stdout, sh.Stderr = &outb, &outb
		err := sh.Run()
		cancel()
		code := sh.ProcessState.ExitCode()
		if shellError.MatchString(outb.String()) {
			t.Errorf("%s: %s: the shell failed (exit %d):\n%s", where, c.text, code, outb.String())
			continue
		}
		if err != nil && code != 1 {
			t.Errorf("%s: %s: %v (exit %d; 0 or 1 expected):\n%s", where, c.text, err, code, outb.String())
			continue
		}
		got := docNormalise(outb.String())
		for _, l := range c.output {
			for _, piece := range strings.Split(l, "…") {
				if p := docNormalise(piece); p != "" && !strings.Contains(got, p) {
					t.Errorf("%s: %s does not print %q; it prints:\n%s", where, c.text, p, outb.String())
				}
			}
		}
	}
	t.Logf("%d commands run, %d listed as not runnable and checked without running", ran, checked)
	if ran < 30 {
		t.Errorf("ran %d commands of the docs; want at least 30 (is the code block parser broken?)", ran)
	}
}

// TestReadmeShape: README.md is a quickstart of at most 200 lines whose
// first 40 show `make up` and `make test` as commands to type.
func TestReadmeShape(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 200 {
		t.Errorf("README.md has %d lines; keep it at most 200 and move the rest into docs/", len(lines))
	}
	var first []docCommand
	for _, c := range docCommands(t, "README.md") {
		if c.line <= 40 {
			first = append(first, c)
		}
	}
	for _, want := range []string{"make up", "make test"} {
		if !slices.ContainsFunc(first, func(c docCommand) bool { return c.text == want }) {
			t.Errorf("README.md does not show %q as a command in its first 40 lines", want)
		}
	}
}

// TestDocsPagesAndLinks: every gwdev command has its page
// docs/commands/NAME.md, linked from docs/README.md, and every relative
// link in README.md and docs/ leads to a file that exists and, for a
// Markdown page, to a heading (or anchor) it has.
func TestDocsPagesAndLinks(t *testing.T) {
	index, err := os.ReadFile(filepath.Join(repoRoot, "docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" {
			continue
		}
		page := "commands/" + c.Name() + ".md"
		if _, err := os.Stat(filepath.Join(repoRoot, "docs", page)); err != nil {
			t.Errorf("gwdev %s has no page docs/%s", c.Name(), page)
		}
		if !strings.Contains(string(index), "("+page+")") {
			t.Errorf("docs/README.md does not link to %s", page)
		}
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	anchors := map[string][]string{}
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		for n, l := range strings.Split(string(data), "\n") {
			for _, m := range link.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, anchor, _ := strings.Cut(target, "#")
				full := f
				if path != "" {
					full = filepath.ToSlash(filepath.Join(filepath.Dir(f), path))
				}
				if _, err := os.Stat(filepath.Join(repoRoot, full)); err != nil {
					t.Errorf("%s:%d: link %s: no file %s", f, n+1, target, full)
					continue
				}
				if anchor == "" || !strings.HasSuffix(full, ".md") {
					continue
				}
				if _, ok := anchors[full]; !ok {
					anchors[full] = mdAnchors(t, full)
				}
				if !slices.Contains(anchors[full], anchor) {
					t.Errorf("%s:%d: link %s: %s has no heading or anchor %q", f, n+1, target, full, anchor)
				}
			}
		}
	}
}

// mdAnchors are the anchors GitHub makes for a page's headings (lower
// case, punctuation but - and _ dropped, spaces as -, -1 -2 for
// repeats) and its <a id|name="…"> tags.
func mdAnchors(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, file))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	seen := map[string]int{}
	inBlock := false
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			continue
		}
		for _, m := range regexp.MustCompile(`<a (?:id|name)="([^"]+)"`).FindAllStringSubmatch(l, -1) {
			out = append(out, m[1])
		}
		h := regexp.MustCompile(`^#{1,6} (.+)$`).FindStringSubmatch(l)
		if h == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h[1])) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			out = append(out, slug+"-"+strconv.Itoa(n))
		} else {
			out = append(out, slug)
		}
		seen[slug]++
	}
	return out
}

// docsPlaceholder is a word of a synopsis: DIR, URL, [BASE], a cut (…).
var docsPlaceholder = regexp.MustCompile(`(^|\s)(\[|[A-Z][A-Z0-9_]*(\s|$|\])|…)`)

// TestDocsInlineCommands checks the gwdev commands that README.md and the
// docs name in their prose (`gwdev up --no-tui`) without running them: the
// command exists, its flags parse and a
// samples/ folder it names exists (a command named without its arguments
// is fine). Synopses with placeholders (DIR, URL, [flags]) are checked for
// the command only.
func TestDocsInlineCommands(t *testing.T) {
	span := regexp.MustCompile("`(gwdev [^`]+)`")
	n := 0
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		inBlock := false
		for i, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "```") {
				inBlock = !inBlock
				continue
			}
			if inBlock {
				continue
			}
			for _, m := range span.FindAllStringSubmatch(l, -1) {
				words := shellWords(m[1])
				if docsPlaceholder.MatchString(m[1]) {
					words = words[:min(2, len(words))] // the command only
					if len(words) == 2 && (strings.HasPrefix(words[1], "-") || docsPlaceholder.MatchString(words[1])) {
						words = words[:1]
					}
					if len(words) == 1 {
						continue
					}
					root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
					if c, _, err := root.Find(words[1:]); err != nil || c == root {
						t.Errorf("%s:%d: `%s`: no command gwdev %s", f, i+1, m[1], words[1])
					}
					continue
				}
				n++
				if bad := checkWords(words, true); bad != "" {
					t.Errorf("%s:%d: `%s`: %s", f, i+1, m[1], bad)
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("checked %d gwdev commands in the docs' prose; want at least 20", n)
	}
}

// TestDecisionsIndex: docs/decisions.md lists every section of the pages
// under docs/decisions/ under its own heading, linking to it, so that the
// links to decisions.md#section written before the split keep leading to
// it (and a new section is found from the index).
func TestDecisionsIndex(t *testing.T) {
	index, err := os.ReadFile(filepath.Join(repoRoot, "docs", "decisions.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "decisions", "*.md"))
	if len(pages) < 5 {
		t.Fatalf("found %d pages under docs/decisions", len(pages))
	}
	n := 0
	for _, p := range pages {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel := "decisions/" + filepath.Base(p)
		for _, m := range regexp.MustCompile(`(?m)^## (.+)$`).FindAllStringSubmatch(string(data), -1) {
			n++
			i := strings.Index(string(index), "\n## "+m[1]+"\n")
			if i < 0 {
				t.Errorf("docs/decisions.md has no heading %q (the section of %s)", m[1], rel)
				continue
			}
			entry, _, _ := strings.Cut(string(index[i+len(m[1])+5:]), "\n## ")
			if !strings.Contains(entry, "]("+rel+"#") {
				t.Errorf("docs/decisions.md's entry %q does not link to %s", m[1], rel)
			}
		}
	}
	t.Logf("%d sections", n)
}

// TestDocsCommandPagesNameEveryFlag: a command's page names every flag it
// has (`--name`), its subcommands' too.
func TestDocsCommandPagesNameEveryFlag(t *testing.T) {
	root := newRootCmd(strings.NewReader(""), io.Discard, io.Discard)
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpFlag()
	root.InitDefaultVersionFlag()
	for _, c := range root.Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue // completion's flags are cobra's, per shell
		}
		page, err := os.ReadFile(filepath.Join(repoRoot, "docs", "commands", c.Name()+".md"))
		if err != nil {
			t.Error(err)
			continue
		}
		cmds := append([]*cobra.Command{c}, c.Commands()...)
		for _, cmd := range cmds {
			cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
				if f.Hidden || f.Name == "help" {
					return
				}
				if !strings.Contains(string(page), "--"+f.Name) {
					t.Errorf("docs/commands/%s.md does not name --%s (%s)", c.Name(), f.Name, cmd.CommandPath())
				}
			})
		}
	}
}

// TestDocsNameFilesThatExist: a repository path the docs name in code
// style (`engine/ingress_annotations.go`, `bench/check.sh`) exists, so a
// file that moves takes its mentions along. The decision records under
// docs/decisions/ tell history and may name files as they were.
func TestDocsNameFilesThatExist(t *testing.T) {
	path := regexp.MustCompile("`((?:cmd|engine|emulator|watch|tui|internal|bench|conformance|samples|docs)/[A-Za-z0-9_./-]+)`")
	n := 0
	for _, f := range docFiles(t) {
		if strings.HasPrefix(f, "docs/decisions/") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(string(data), "\n") {
			for _, m := range path.FindAllStringSubmatch(l, -1) {
				p := strings.TrimRight(m[1], ".")
				if strings.Contains(p, "*") {
					continue
				}
				n++
				if _, err := os.Stat(filepath.Join(repoRoot, p)); err != nil {
					t.Errorf("%s:%d: names %s, which does not exist", f, i+1, p)
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("found %d repository paths in the docs; want at least 20", n)
	}
}
