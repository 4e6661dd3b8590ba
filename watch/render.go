package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// DefaultRenderTimeout is how long a render command may run before it is
// stopped and reported.
const DefaultRenderTimeout = 2 * time.Minute

// maxRenderStderr is how much of a command's standard error a problem
// quotes (its end, where tools print the error).
const maxRenderStderr = 4 << 10

// Render is a command whose standard output is manifests, as gwdev.yaml's
// render: list gives it (`helm template shop ./chart -f values-dev.yaml`,
// `kustomize build --enable-helm overlays/dev`, `cue export …`).
type Render struct {
	// Index is the command's place in the list; it names the output
	// "render[Index]: Command".
	Index int
	// Command is run by sh -c in Dir.
	Command string
	// Dir is the folder the command runs in and Watch is relative to
	// ("": the current directory).
	Dir string
	// Watch lists the files and folders whose changes run the command
	// again. They are the command's inputs, never read as manifests.
	Watch []string
	// Timeout bounds a run (0: DefaultRenderTimeout).
	Timeout time.Duration
}

// Name is how sources and problems name the command's output:
// "render[0]: helm template shop ./chart".
func (r Render) Name() string {
	return fmt.Sprintf("render[%d]: %s", r.Index, r.Command)
}

// watchPaths are Watch made absolute.
func (r Render) watchPaths() []string {
	out := make([]string, 0, len(r.Watch))
	for _, p := range r.Watch {
		if !filepath.IsAbs(p) {
			p = filepath.Join(r.Dir, p)
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		out = append(out, p)
	}
	return out
}

// stamps stamps every file the command watches.
func (r Render) stamps() map[string]statStamp {
	out := map[string]statStamp{}
	for _, p := range r.watchPaths() {
		for f, s := range stampTree(p) {
			out[f] = s
		}
	}
	return out
}

// renderRun is one run of a Render.
type renderRun struct {
	render Render
	stdout []byte
	// stderr is what the command wrote there (bounded to its end).
	stderr string
	// err is why the run failed: it could not start, it exited non-zero
	// or it timed out (nil: it succeeded).
	err error
	// stamps are the watched files as they were when the command started.
	stamps map[string]statStamp
	took   time.Duration
}

// run runs the command once.
func (r Render) run(ctx context.Context) *renderRun {
	rr := &renderRun{render: r, stamps: r.stamps()}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultRenderTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", r.Command)
	cmd.Dir = r.Dir
	var stderr bytes.Buffer
	stdout := &cappedBuffer{max: MaxFileSize + 1}
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	rr.took = time.Since(start)
	rr.stdout = stdout.buf.Bytes()
	rr.stderr = tail(strings.TrimSpace(stderr.String()), maxRenderStderr)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		rr.err = fmt.Errorf("stopped after %s (the time a render may take)", timeout)
	case err != nil:
		rr.err = err
	case stdout.n > MaxFileSize:
		rr.err = fmt.Errorf("output too large: %d bytes is over the 10 MiB (%d bytes) limit", stdout.n, MaxFileSize)
	}
	return rr
}

// cappedBuffer keeps the first max bytes written to it and counts them
// all: a render's output over the file limit is measured, not held.
type cappedBuffer struct {
	buf bytes.Buffer
	max int
	// n is how many bytes were written.
	n int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.n += len(p)
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// tail keeps the last n bytes of s, saying that it cut.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// loadRender loads a run's output; a failed run is one problem with its
// standard error, and standard error of a run that succeeded is a warning.
func (l *Loader) loadRender(rr *renderRun) (collected, []Warning) {
	name := rr.render.Name()
	if rr.err != nil {
		msg := "command failed: " + rr.err.Error()
		if rr.stderr != "" {
			msg += "; stderr:\n" + rr.stderr
		}
		return collected{problems: []Problem{{File: name, Message: msg}}}, nil
	}
	c := l.loadFiles([]fileInput{{path: name, data: rr.stdout}}, nil)
	templateSources(rr.stdout, name, c.problems)
	var warnings []Warning
	if rr.stderr != "" {
		warnings = append(warnings, Warning{File: name, Message: "the command succeeded and wrote to stderr: " + rr.stderr})
	}
	return c, warnings
}

// renderInputs is the set of files (absolute) the renders watch: their
// inputs, not manifests.
func renderInputs(renders []Render) map[string]bool {
	set := map[string]bool{}
	for _, r := range renders {
		for f := range r.stamps() {
			set[f] = true
		}
	}
	return set
}

// chartWarnings says, for every Helm chart folder the walk found that no
// render command reads, that its templates are not loaded.
func chartWarnings(charts []string, inputs map[string]bool) []Warning {
	var out []Warning
	for _, dir := range charts {
		abs, err := filepath.Abs(dir)
		if err != nil {
			continue
		}
		rendered := false
		for p := range inputs {
			if within(p, abs) {
				rendered = true
				break
			}
		}
		if !rendered {
			out = append(out, Warning{File: dir, Message: "a Helm chart (Chart.yaml): its templates are not manifests and are not read; " +
				"render it with a render: command in gwdev.yaml (helm template …) that watches this folder"})
		}
	}
	return out
}

// templateSources names, in problems about a render's output, the template
// the line came from when the renderer says so with a "# Source: FILE"
// comment at the top of each document, as helm template does.
func templateSources(out []byte, name string, problems []Problem) {
	if !bytes.Contains(out, []byte("# Source: ")) {
		return
	}
	lines := bytes.Split(out, []byte("\n"))
	for i := range problems {
		p := &problems[i]
		if p.File != name || p.Line <= 0 || p.Line > len(lines) {
			continue
		}
		for j := p.Line - 1; j >= 0; j-- {
			l := lines[j]
			if src, ok := bytes.CutPrefix(l, []byte("# Source: ")); ok {
				p.Message += " (from template " + string(bytes.TrimSpace(src)) + ")"
				break
			}
			if isSeparator(l) {
				break
			}
		}
	}
}
