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

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/emulator/admin"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/web"
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
	// open opens the web view in the browser at start (--open).
	open bool
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
	// serveProcs serves on half the cores (project.ServeProcs). The
	// command sets it; tests that run up in their own process leave it
	// off, as the setting is the whole process's.
	serveProcs bool
}

func newUpCmd() *cobra.Command {
	o := &upOptions{serveProcs: true}
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
	f.BoolVar(&o.open, "open", false, "open the web view (http://ADMIN/ui/) in the browser at start (xdg-open, or open on macOS)")
	f.BoolVar(&o.noTUI, "no-tui", false, "print plain lines instead of the dashboard (the default when stdin or stdout is not a terminal, or with --access-log -, which says so)")
	return cmd
}

func (o *upOptions) run(ctx context.Context, out, errOut io.Writer, dir string) error {
	offset := int32(o.portOffset)
	if offset == 0 { // up's 0 is "no fallback", the engine's is "the default"
		offset = -1
	}
	proj, err := project.Open([]string{dir}, project.Flags{Backends: o.backends, Profiles: o.profiles, CRDs: o.crds, Trust: o.trust,
		Classes: o.classes, NoKustomize: !o.kustomize, PortOffset: offset})
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
	ecfg := emulator.Config{PortOffset: o.portOffset, BindOverride: o.address, AccessLog: accessLog,
		TCPIdleTimeout: o.tcpIdle, UDPSessionTimeout: o.udpSession, CAFiles: app.KnownCAFiles(dir)}
	o.limits.apply(&ecfg, out) // a gwdev: line like the others, on stdout
	srv := emulator.New(ecfg)
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Close(sctx)
	}()
	sess, err := app.NewSession(ctx, proj, app.SessionOptions{Dir: dir, Server: srv, CRDsFlag: o.crds != "",
		Watch: watch.WatchOptions{Debounce: o.debounce, EmptyGrace: grace}, ServeProcs: o.serveProcs})
	if err != nil {
		return err
	}
	defer sess.Close()
	var adminUp app.AdminState
	// migrated is told the Migration comparisons the dashboard runs (the
	// web view's, when there is one, so that one comparison serves both).
	migrated := func(app.MigrationState) {}
	tui := o.useTUI(out)
	if o.admin != "" && o.admin != "off" {
		status := &app.AdminStatus{}
		adm := admin.New(srv, status)
		defer adm.Close()
		wo := web.Options{Dir: dir, CAFiles: app.KnownCAFiles(dir), Project: proj}
		if tui {
			wo.Project = nil // the dashboard's comparisons are the web view's
		}
		view := web.New(ctx, wo)
		defer view.Wait()
		opts := o.limits.adminOptions()
		opts.Web = view.Handler()
		if err := adm.Register(view.Collectors()...); err != nil {
			return err
		}
		adminUp = app.ServeAdmin(ctx, o.admin, adm, opts, app.InstanceID(dir))
		if adminUp.Addr != "" {
			status.Admin = adm
			sess.Subscribe(status.Publish)
			sess.Subscribe(view.Publish)
			migrated = view.SetMigration
		}
	}
	if o.open {
		openWebView(out, adminUp.Web)
	}
	if tui {
		return o.runTUI(ctx, out, dir, sess, adminUp, migrated)
	}
	if why := o.dashboardOff(terminals(out)); why != "" {
		fmt.Fprintf(out, "gwdev: %s\n", why)
	}
	if adminUp.Problem {
		fmt.Fprintf(errOut, "gwdev: %s\n", adminUp.Note)
	} else if adminUp.Note != "" {
		fmt.Fprintf(out, "gwdev: %s\n", adminUp.Note)
	}
	if path := proj.ConfigPath(); path != "" {
		fmt.Fprintf(out, "gwdev: settings from %s (reloaded when it changes)\n", path)
	}
	for _, r := range proj.Renders() {
		when := "run once: its watch: list is empty"
		if len(r.Watch) > 0 {
			when = "run again when " + strings.Join(r.Watch, " or ") + " changes"
		}
		if !r.Consent.Given {
			when = "not run: the folder is not trusted, see its problem"
		}
		fmt.Fprintf(out, "gwdev: %s (%s)\n", r.Name(), when)
	}
	sess.Subscribe(app.NewPlainPrinter(out).Print)
	// The folder's routing tests after every reload (gwdev test).
	tests := app.NewTestRunner(dir, func(m app.TestsState) { app.PrintTests(out, m) })
	defer tests.Wait()
	sess.Subscribe(func(st *app.State) { tests.Submit(ctx, st) })
	// A save of only a test file runs them again on the State served.
	sess.SubscribeTestFiles(func(st *app.State, saved []string) { tests.Rerun(ctx, st, saved) })
	sess.Start()
	fmt.Fprintf(out, "gwdev: watching %s (ctrl-c to stop)\n", dir)
	sess.Run(ctx, func(err error) { fmt.Fprintln(errOut, "gwdev: watch:", err) })
	fmt.Fprintln(out, "gwdev: stopping")
	return nil
}
