package main

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/emulator/admin"
)

// limitOptions are the flags bounding what clients can hold open in
// `gwdev up`, and who may reach the admin API.
type limitOptions struct {
	maxConns, maxUDPSessions int
	traceMiB                 int
	adminAllowRemote         bool
	adminPprof               bool
}

func (l *limitOptions) addFlags(f *pflag.FlagSet) {
	f.IntVar(&l.maxConns, "max-conns", 0, fmt.Sprintf("open connections per listener socket; more are refused and traced (0: %d, or an eighth of the descriptor limit if lower)", emulator.DefaultMaxConnsPerListener))
	f.IntVar(&l.maxUDPSessions, "max-udp-sessions", 0, fmt.Sprintf("UDPRoute sessions (client addresses) per listener; more are refused and traced (0: %d, or an eighth of the descriptor limit if lower)", emulator.DefaultMaxUDPSessions))
	f.IntVar(&l.traceMiB, "trace-memory", emulator.DefaultTraceBytes>>20, "memory budget of the trace history in MiB (the last 1000 traces, fewer past it)")
	f.BoolVar(&l.adminAllowRemote, "admin-allow-remote", false, "let --admin bind a non-loopback address and answer any Host header (exposes traces and status)")
	f.BoolVar(&l.adminPprof, "admin-pprof", false, fmt.Sprintf("serve Go's profiler on the admin API under /debug/pprof/ (profiles capped at %s)", admin.MaxProfileDuration))
}

// apply raises the descriptor limit to its hard limit and sets cfg's
// limits: the flags, else defaults well under the descriptor limit.
func (l *limitOptions) apply(cfg *emulator.Config, note io.Writer) {
	fds := raiseFileLimit()
	cfg.MaxConnsPerListener = limitUnder(l.maxConns, emulator.DefaultMaxConnsPerListener, fds)
	cfg.MaxUDPSessions = limitUnder(l.maxUDPSessions, emulator.DefaultMaxUDPSessions, fds)
	cfg.TraceBytes = l.traceMiB << 20
	if note != nil && fds > 0 && fds/8 < emulator.DefaultMaxConnsPerListener && (l.maxConns == 0 || l.maxUDPSessions == 0) {
		fmt.Fprintf(note, "gwdev: %d file descriptors allowed: at most %d connections per listener and %d UDP sessions (--max-conns, --max-udp-sessions)\n",
			fds, cfg.MaxConnsPerListener, cfg.MaxUDPSessions)
	}
}

// limitUnder is flag when set, else def or an eighth of the descriptor
// limit fds when that is lower (at least 16).
func limitUnder(flag, def int, fds uint64) int {
	if flag > 0 {
		return flag
	}
	if fds > 0 && fds/8 < uint64(def) {
		return max(16, int(fds/8))
	}
	return def
}

// adminOptions are the admin API's options from the flags.
func (l *limitOptions) adminOptions() admin.Options {
	return admin.Options{AllowRemote: l.adminAllowRemote, Pprof: l.adminPprof}
}
