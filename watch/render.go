package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
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
	// Consent is whether the user allowed this command to run (the zero
	// value: not allowed, the command is never started and a problem says
	// how to allow it).
	Consent Consent
}

// Consent is whether the user allowed a folder's configuration to make
// gwdev run commands (render:) and reach the network (kustomize remote
// resources), as direnv asks before it runs a folder's .envrc. A folder
// someone else wrote, a pull request or a revision of one, cannot give
// itself consent: only the user can (gwdev trust, --trust).
type Consent struct {
	// Given is true when the user allowed it (false: nothing is run or
	// fetched, and a problem names what was not, with Hint).
	Given bool
	// Hint says how to allow it, such as "run `gwdev trust DIR`, or pass
	// --trust" ("": the problem says only that consent is needed).
	Hint string
}

// refusal words what was not done, why ("gwdev runs a folder's commands
// only with your consent for that folder") and how to allow it.
func (c Consent) refusal(what, why string) string {
	msg := what + " (" + why + ")"
	if c.Hint != "" {
		msg += "; to allow it, " + c.Hint
	}
	return msg
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
	// stderrBuf holds the end of what the command wrote to stderr while
	// it ran (nil: not run).
	stderrBuf *tailBuffer
	// err is why the run failed: it could not start, it exited non-zero
	// or it timed out (nil: it succeeded).
	err error
	// refused is true when the command was not started for want of
	// consent (Render.Consent).
	refused bool
	// stamps are the watched files as they were when the command started.
	stamps map[string]statStamp
	took   time.Duration
}

// run runs the command once, if the user consented (Render.Consent);
// otherwise it starts nothing and the run is refused.
func (r Render) run(ctx context.Context) *renderRun {
	rr := &renderRun{render: r, stamps: r.stamps()}
	if !r.Consent.Given {
		rr.refused = true
		return rr
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultRenderTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", r.Command)
	cmd.Dir = r.Dir
	stderr := newTailBuffer(maxRenderStderr)
	rr.stderrBuf = stderr
	stdout := &cappedBuffer{max: MaxFileSize + 1}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	rr.took = time.Since(start)
	rr.stdout = stdout.buf.Bytes()
	rr.stderr = strings.TrimSpace(string(stderr.Bytes()))
	if stderr.n > int64(maxRenderStderr) {
		rr.stderr = "…" + rr.stderr // its end only
	}
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

// tailBuffer keeps the last max bytes written to it in a ring and counts
// them all: a render's stderr is quoted by its end (where tools print the
// error), and a command writing gigabytes there holds max bytes, not them.
type tailBuffer struct {
	ring []byte
	// next is where the next byte goes in ring once it is full.
	next int
	max  int
	// n is how many bytes were written.
	n int64
}

func newTailBuffer(max int) *tailBuffer {
	return &tailBuffer{max: max}
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.n += int64(len(p))
	written := len(p)
	if len(p) >= t.max {
		// Only the end of p stays: start the ring afresh with it.
		if t.ring == nil {
			t.ring = make([]byte, t.max)
		}
		copy(t.ring, p[len(p)-t.max:])
		t.ring, t.next = t.ring[:t.max], 0
		return written, nil
	}
	if len(t.ring) < t.max { // not full yet: append up to max
		room := min(t.max-len(t.ring), len(p))
		if t.ring == nil {
			t.ring = make([]byte, 0, t.max)
		}
		t.ring = append(t.ring, p[:room]...)
		p = p[room:]
	}
	for len(p) > 0 { // full: overwrite the oldest bytes
		c := copy(t.ring[t.next:], p)
		p = p[c:]
		t.next = (t.next + c) % t.max
	}
	return written, nil
}

// Bytes returns the bytes kept, oldest first.
func (t *tailBuffer) Bytes() []byte {
	if len(t.ring) < t.max || t.next == 0 {
		return slices.Clone(t.ring)
	}
	return append(slices.Clone(t.ring[t.next:]), t.ring[:t.next]...)
}

// loadRender loads a run's output; a failed run is one problem with its
// standard error, and standard error of a run that succeeded is a warning.
func (l *Loader) loadRender(rr *renderRun) (collected, []Warning) {
	name := rr.render.Name()
	if rr.refused {
		return collected{problems: []Problem{{File: name, Kind: ProblemNotAllowed,
			Message: rr.render.Consent.refusal(fmt.Sprintf("not run: the command %q", rr.render.Command),
				"gwdev runs a folder's commands only with your consent for that folder")}}}, nil
	}
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
