package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/emulator/admin"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/tui"
	"github.com/gwdev/gwdev/watch"
)

// upOptions are the flags of `gwdev up`.
type upOptions struct {
	// trust is --trust (trust.go).
	trust bool

	portOffset int
	address    string
	accessLog  string
	backends   []string
	classes    []string
	debounce   time.Duration
	// emptyGrace is how long an emptied file keeps its objects (0: not).
	emptyGrace time.Duration
	noTUI      bool
	// kustomize builds folders holding a kustomization (--kustomize).
	kustomize bool
	// admin is the admin API address ("" or "off": none).
	admin string
	// tcpIdle and udpSession are the L4 timeouts (0: the emulator's defaults).
	tcpIdle, udpSession time.Duration

	// profiles are --profile CLASS=PROFILE flags (profiles.go).
	profiles []string
	// crds is --crds (crds.go).
	crds string
	// limits are the connection, session and trace limits and the admin
	// API's exposure (limits.go).
	limits limitOptions
}

func newUpCmd() *cobra.Command {
	o := &upOptions{}
	cmd := &cobra.Command{
		Use:   "up [DIR]",
		Short: "Watch manifests, translate on every save and serve the routes on loopback",
		Long: `up watches DIR (default: the current directory) recursively, translates the manifests on
every change and serves the result on loopback: each Gateway gets 127.0.0.1, 127.0.0.2, …
(or the loopback address in its spec.addresses) and its listeners' ports. A port that cannot
be bound (privileged, or in use) is served on port+--port-offset instead (80→8080).

DIR may be removed, replaced (mv) or not exist yet: gwdev keeps serving the objects it last
loaded, says so, and loads DIR again as soon as it is there. A file that becomes empty keeps
its objects for --empty-file-grace, as some editors truncate a file before writing it.

A folder holding a kustomization.yaml (DIR or one below it) is built as kubectl kustomize
builds it, and rebuilt when any file the build read changes (--kustomize=false reads its files
one by one). The output of gwdev.yaml's render: commands (helm template, cue export…) is
loaded like a file and rendered again when a path they watch changes. A failing build or
render keeps its last good objects serving and shows why.

Backends: a Service port resolves to a local address you give (gwdev.yaml "backends:" or
--backend ns/name:port=host:port), else its EndpointSlices, else its ExternalName, else
gwdev's built-in echo backend.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := "."
			if len(args) == 1 {
				dir = args[0]
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return o.run(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), dir)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.portOffset, "port-offset", emulator.DefaultPortOffset, "serve a port that cannot be bound on port+offset (0: no fallback)")
	f.StringVar(&o.address, "address", "", "bind every Gateway on this address instead of its loopback address (careful: a non-loopback address exposes gwdev)")
	f.StringVar(&o.accessLog, "access-log", "", "write one JSON line per request to this file (- for stderr)")
	f.StringArrayVar(&o.backends, "backend", nil, "serve a Service port from a local address: namespace/service:port=host:port (repeatable)")
	f.StringSliceVar(&o.classes, "class", nil, "manage only these GatewayClass names")
	f.DurationVar(&o.debounce, "debounce", 50*time.Millisecond, "a file change after this long without one reloads at once; changes closer together (a git checkout) reload once, this long after the last")
	f.DurationVar(&o.emptyGrace, "empty-file-grace", watch.DefaultEmptyGrace, "keep serving a file's last objects this long after it becomes empty, as editors that truncate before writing leave it (0: drop them at once)")
	f.StringArrayVar(&o.profiles, "profile", nil, profileFlagUsage)
	addCRDsFlag(f, &o.crds)
	addTrustFlag(f, &o.trust)
	f.DurationVar(&o.tcpIdle, "tcp-idle-timeout", emulator.DefaultTCPIdleTimeout, "close a TCPRoute connection after this long without traffic either way")
	f.DurationVar(&o.udpSession, "udp-session-timeout", emulator.DefaultUDPSessionTimeout, "end a UDPRoute session (one client address) after this long without datagrams")
	f.StringVar(&o.admin, "admin", admin.DefaultAddr, "admin API address (/status /routes /traces /traces/stream /metrics /healthz); off to disable")
	o.limits.addFlags(f)
	f.BoolVar(&o.kustomize, "kustomize", true, "build a folder holding a kustomization.yaml as kubectl kustomize does (false: read its files one by one)")
	f.BoolVar(&o.noTUI, "no-tui", false, "print plain lines instead of the dashboard (the default when stdin or stdout is not a terminal, or with --access-log -, which says so)")
	return cmd
}

func (o *upOptions) run(ctx context.Context, out, errOut io.Writer, dir string) error {
	proj, err := openProject([]string{dir}, projectFlags{backends: o.backends, profiles: o.profiles, crds: o.crds, trust: o.trust,
		classes: o.classes, noKustomize: !o.kustomize})
	if err != nil {
		return err
	}
	var accessLog io.Writer
	switch o.accessLog {
	case "":
	case "-":
		accessLog = errOut
	default:
		f, err := os.OpenFile(o.accessLog, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("--access-log: %w", err)
		}
		defer f.Close()
		accessLog = f
	}
	grace := o.emptyGrace
	if grace <= 0 {
		grace = -1 // WatchOptions: negative is none, 0 the default
	}
	w, err := proj.watchDir(ctx, watch.WatchOptions{Debounce: o.debounce, EmptyGrace: grace})
	if err != nil {
		return err
	}
	ecfg := emulator.Config{PortOffset: o.portOffset, BindOverride: o.address, AccessLog: accessLog,
		TCPIdleTimeout: o.tcpIdle, UDPSessionTimeout: o.udpSession, CAFiles: knownCAFiles(dir)}
	o.limits.apply(&ecfg, out) // a gwdev: line like the others, on stdout
	srv := emulator.New(ecfg)
	gcCtx, stopGC := context.WithCancel(ctx)
	gcDone := make(chan struct{})
	go func() {
		defer close(gcDone)
		serveGC(gcCtx) // gc.go: heap headroom while serving
	}()
	defer func() {
		stopGC()
		<-gcDone
	}()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Close(sctx)
	}()
	rl := &reloader{out: out, dir: dir, srv: srv, project: proj, crdsFlag: o.crds != "", cfgSeen: configSignature(dir), setRenders: w.SetRenders}
	cfgChanged := watchProjectConfig(ctx, dir, o.debounce)
	var adminUp adminState
	if o.admin != "" && o.admin != "off" {
		objects := &adminObjects{}
		adm := admin.New(srv, objects)
		defer adm.Close()
		adminUp = o.serveAdmin(ctx, adm, instanceID(dir))
		if adminUp.addr != "" {
			rl.admin, rl.adminObjects = adm, objects
		}
	}
	if o.useTUI(out) {
		return o.runTUI(ctx, out, dir, w, cfgChanged, rl, adminUp)
	}
	if why := o.dashboardOff(terminals(out)); why != "" {
		fmt.Fprintf(out, "gwdev: %s\n", why)
	}
	if adminUp.problem {
		fmt.Fprintf(errOut, "gwdev: %s\n", adminUp.note)
	} else if adminUp.note != "" {
		fmt.Fprintf(out, "gwdev: %s\n", adminUp.note)
	}
	if proj.cfg.path != "" {
		fmt.Fprintf(out, "gwdev: settings from %s (reloaded when it changes)\n", proj.cfg.path)
	}
	for _, r := range proj.cfg.renders {
		when := "run once: its watch: list is empty"
		if len(r.Watch) > 0 {
			when = "run again when " + strings.Join(r.Watch, " or ") + " changes"
		}
		if !r.Consent.Given {
			when = "not run: the folder is not trusted, see its problem"
		}
		fmt.Fprintf(out, "gwdev: %s (%s)\n", r.Name(), when)
	}
	rl.apply(w.Current(), true)
	fmt.Fprintf(out, "gwdev: watching %s (ctrl-c to stop)\n", dir)
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(out, "gwdev: stopping")
			return nil
		case err := <-w.Errors():
			fmt.Fprintln(errOut, "gwdev: watch:", err)
		case u := <-w.Updates():
			rl.apply(u, false)
		case <-cfgChanged:
			rl.configChanged()
		}
	}
}

// reloader translates each watch update and applies it to the data plane.
type reloader struct {
	out io.Writer
	dir string // the watched folder, as given
	srv *emulator.Server
	// project loads and translates (project.go); its cfg, what gwdev.yaml
	// and the flags give, is read again when gwdev.yaml changes
	// (configChanged).
	project *project
	// cfgErr is the last mistake found in gwdev.yaml (nil: none); the
	// mappings before it keep serving.
	cfgErr error
	// crdsFlag is true when --crds was given: gwdev.yaml's crds: is then
	// not used, at start or later.
	crdsFlag bool
	// cfgSeen is gwdev.yaml's configSignature when last read.
	cfgSeen string
	// lastUpdate is the watch state last applied, applied again when only
	// gwdev.yaml changes.
	lastUpdate *watch.Update
	n          int
	last       map[string]string // port lines printed last time
	// prev is the last translation: each Gateway keeps its address from it.
	prev *engine.Result
	// admin, when set, is told about every translation applied.
	admin *admin.Admin
	// adminObjects serves the admin API's /status from every translation.
	adminObjects *adminObjects
	// setRenders, when set, gives the watcher gwdev.yaml's new render:
	// commands.
	setRenders func([]watch.Render)
	// notify, when set, receives each state instead of out (the dashboard).
	notify func(tui.StateMsg)
}

func (r *reloader) apply(u *watch.Update, first bool) {
	if u.Root == watch.RootBack {
		r.readConfig() // the folder came back, maybe with another gwdev.yaml
	}
	r.lastUpdate = u
	u = r.withConfigProblem(u)
	r.n++
	start := time.Now()
	// No collection until the new table serves and the result is finished
	// (gc.go): collecting the last reload's garbage meanwhile slowed
	// edit-to-served.
	gcDone := holdGC()
	// The data plane takes the table as soon as it is built, while the rest
	// of the result (routes served, findings) is finished on another core;
	// translated and applied overlap. Gateways keep their addresses (prev).
	res, finish := r.project.translateTableFirst(u.Result.Snapshot, translation{now: metav1.NewTime(start.UTC().Truncate(time.Second)), prev: r.prev})
	tableAt := time.Now()
	finished := make(chan time.Duration, 1)
	go func() {
		finish()
		finished <- time.Since(start)
	}()
	rep := r.srv.Apply(res.Table)
	applied := time.Since(tableAt)
	translated := <-finished
	gcDone()
	r.prev = res
	r.project.addLoadFindings(res, u.Result)
	empty := noManifests(res.Objects.Len(), len(u.Result.Problems)+len(u.Stale), len(res.Findings), r.dir, "serve")
	if empty != "" {
		// As check fails on it: a folder emptied of its manifests serves
		// nothing, which is no "no problems".
		addFindings(res, []engine.Finding{{Severity: engine.SeverityWarning, Message: empty + " Every listener is closed."}})
	}
	if r.admin != nil {
		r.adminObjects.res.Store(res)
		r.admin.SetReload(adminReload(res, len(u.Result.Problems), start, translated, applied))
	}
	if r.notify != nil {
		r.notify(stateMsg(u, res, rep, r.n-1, start, translated, applied))
		return
	}
	if note, _ := rootNotice(r.dir, u, first); note != "" {
		fmt.Fprintf(r.out, "gwdev: %s\n", note)
	}
	nerr := len(u.Result.Problems)
	for _, f := range res.Findings {
		if f.Severity == engine.SeverityError {
			nerr++
		}
	}
	what := "loaded"
	if !first {
		what = fmt.Sprintf("reload #%d (%s)", r.n-1, changedSummary(u.Changed))
	}
	counts := plural(nerr, "problem")
	if empty != "" {
		counts += ", warning: nothing to serve"
	}
	if ru := res.Reuse; !first && ru.Reused > 0 {
		// Incremental translation (engine/incremental.go): the routes
		// whose compiled rules came from the last reload.
		counts += fmt.Sprintf(", %d of %d routes reused", ru.Reused, ru.Reused+ru.Compiled)
	}
	if ru := res.Reuse; !first && ru.Patched {
		// The table is the last one with only the changed routes'
		// virtual hosts rebuilt (engine/incremental_table.go).
		counts += fmt.Sprintf(", table patched (%s rebuilt)", plural(ru.VirtualHosts, "virtual host"))
	}
	fmt.Fprintf(r.out, "gwdev: %s: %s, %s; load %s, translate %s, apply %s\n", what,
		plural(res.Objects.Len(), "object"), counts, roundDur(u.Took), roundDur(translated), roundDur(applied))
	if empty != "" {
		fmt.Fprintf(r.out, "  ! %s Every listener is closed.\n", empty)
	}
	for _, p := range u.Result.Problems {
		fmt.Fprintf(r.out, "  ✗ %s\n", p.String())
	}
	for _, s := range u.Stale {
		fmt.Fprintf(r.out, "  ! %s: still serving the last good version from %s\n", s.Object, s.Source)
	}
	for _, w := range u.Result.Warnings {
		fmt.Fprintf(r.out, "  ! %s\n", w)
	}
	for _, f := range res.Findings {
		mark := "✗"
		switch {
		case f.Severity == engine.SeverityWarning && f.Type == "" && f.Object.Kind == "Service":
			mark = "!" // a backend mapping nothing uses (mappingFindings)
		case f.Severity == engine.SeverityWarning && f.Reason == engine.ReasonNotImplemented:
			mark = "!" // a field or kind gwdev does not implement: never silent
		case f.Severity != engine.SeverityError:
			continue
		}
		scope := ""
		if f.Scope != "" {
			scope = " " + f.Scope
		}
		fmt.Fprintf(r.out, "  %s %s %s%s: %s\n", mark, f.Source, f.Object, scope, strings.TrimPrefix(f.Condition()+" "+f.Reason+": "+f.Message, " : "))
	}
	r.printPorts(rep)
}

// printPorts prints the serving addresses when they change.
func (r *reloader) printPorts(rep *emulator.ApplyReport) {
	lines := map[string]string{}
	var order []string
	for _, p := range rep.Ports {
		key := fmt.Sprintf("%s %s/%d", p.Gateway, p.Transport, p.Port)
		var line string
		switch {
		case p.Error != "":
			line = fmt.Sprintf("  ✗ %s port %d (%s): not served: %s", p.Gateway, p.Port, p.Protocol, p.Error)
		case p.NotServed != "":
			line = fmt.Sprintf("  - %s port %d (%s): %s", p.Gateway, p.Port, p.Protocol, p.NotServed)
		case p.Fallback:
			line = fmt.Sprintf("  → %s port %d (%s) on %s (port %d could not be bound; --port-offset)", p.Gateway, p.Port, p.Protocol, p.Bound, p.Port)
		default:
			line = fmt.Sprintf("  → %s port %d (%s) on %s", p.Gateway, p.Port, p.Protocol, p.Bound)
		}
		lines[key] = line
		order = append(order, key)
	}
	changed := len(lines) != len(r.last)
	for k, v := range lines {
		if r.last[k] != v {
			changed = true
		}
	}
	if !changed {
		return
	}
	for _, k := range order {
		fmt.Fprintln(r.out, lines[k])
	}
	r.last = lines
}

// rootNotice words what happened to the watched folder itself in u (""
// when nothing did); bad is true when it is missing.
func rootNotice(dir string, u *watch.Update, first bool) (note string, bad bool) {
	switch u.Root {
	case watch.RootMissing:
		if first {
			return dir + " does not exist yet: watching for it to appear", true
		}
		return dir + " is gone (removed or renamed away): still serving its last objects, watching for it to come back", true
	case watch.RootBack:
		return dir + " is there: watching it, every file (re)loaded", false
	}
	return "", false
}

func changedSummary(files []string) string {
	switch len(files) {
	case 0:
		return "no file changed"
	case 1:
		return files[0]
	}
	return fmt.Sprintf("%d files", len(files))
}
