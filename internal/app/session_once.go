package app

import (
	"io"
	"runtime"
	"runtime/debug"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/watch"
)

// OnceOptions say how a one-shot Session (Once) loads and translates.
type OnceOptions struct {
	// In is read for the source "-" (stdin).
	In io.Reader
	// Now is the time in status.
	Now metav1.Time
	// KeepTable keeps the whole routing table in the State's Result
	// (check --policies reads it); otherwise only the mesh frontends, which
	// the summary prints, are kept.
	KeepTable bool
	// Where names the sources in Empty's words (as check's messages name
	// them).
	Where string
}

// Once is a one-shot Session, what `gwdev check` reads: it opens the
// project of sources with flags, loads it once and translates it as a
// one-shot process does (no serving routes, a low GC target), adds the
// loader's findings as the Session does (withLoadFindings), and returns
// the State. The State has no data plane (Ports is nil) and its Update's
// Snapshot is let go (dropUnprinted): the Result holds every object. The
// compiled validators, the process's and the project's loader's, are let
// go after the load; a later load compiles them again.
func Once(sources []string, flags project.Flags, o OnceOptions) (*State, error) {
	start := time.Now()
	proj, err := project.Open(sources, flags)
	if err != nil {
		return nil, err
	}
	lr, err := proj.Load(o.In)
	if err != nil {
		return nil, err
	}
	loaded := time.Since(start)
	// check loads once: the compiled validators can go before the
	// translation, when the process holds the most.
	proj.ReleaseValidators()
	// The load leaves the heap it grew to (up to loadHeadroom over what
	// is live, project/gc.go) mapped: hand its free pages back before the
	// translation grows the heap again, or they add to the translation's
	// highest point (check -o yaml, 10,000 routes: peak RSS 110 MB with
	// this against 117-120 MB without; one more collection, ~15 ms).
	debug.FreeOSMemory()
	// The snapshot is the translation's alone from here (dropUnprinted):
	// the objects the result copies to write their status can go while
	// it is computed.
	snap := lr.Snapshot
	lr.Snapshot = nil
	res := proj.Translate(snap, project.Translation{Now: o.Now, NoServing: true, Tight: true})
	u := &watch.Update{Result: lr, Took: loaded}
	st := &State{Update: u, Result: res, Time: start, Load: loaded}
	st.Empty = withLoadFindings(proj, res, u, o.Where, "check")
	st.Translate = time.Since(start) - loaded
	dropUnprinted(lr, res, o.KeepTable)
	return st, nil
}

// withLoadFindings adds to res what every State's findings hold beside the
// engine's (the loader's warnings and notes, the backend mappings nothing
// uses) and returns the words for sources with no manifests ("": there
// are some), naming them where and saying there is nothing to what.
func withLoadFindings(proj *project.Project, res *engine.Result, u *watch.Update, where, what string) (empty string) {
	proj.AddLoadFindings(res, u.Result)
	return project.NoManifests(res.Objects.Len(), len(u.Result.Problems)+len(u.Stale), len(res.Findings), where, what)
}

// dropUnprinted lets go of what check does not print once the result is
// computed: the loaded snapshot (Once already gave it to the translation
// alone; the result holds every object, sharing what it did not copy) and
// the routing table but its mesh frontends (the
// summary's Mesh section prints those; --policies reads the whole table).
// For 10,000 HTTPRoutes that is 30 MB less held while the objects are
// written.
func dropUnprinted(lr *watch.LoadResult, res *engine.Result, policies bool) {
	lr.Snapshot = nil
	if !policies && res.Table != nil {
		mesh := &engine.Table{}
		for _, g := range res.Table.Gateways {
			if g.Mesh != nil {
				mesh.Gateways = append(mesh.Gateways, g)
			}
		}
		res.Table = mesh
	}
	// The collector's next goal is twice what was live at its last cycle,
	// the table included: collect now so that writing the objects starts
	// from what is live without it (peak RSS of check -o yaml, 10,000
	// routes: 207 MB against 234 MB; one cycle, tens of milliseconds).
	runtime.GC()
}
