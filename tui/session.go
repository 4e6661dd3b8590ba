package tui

import (
	"fmt"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/watch"
)

// flashFor is how long what changed in a reload stays highlighted.
const flashFor = 2 * time.Second

// common is what every view shares: the session, the keymap and styles.
type common struct {
	s    *session
	keys *keyMap
	st   *styles
}

// session is the dashboard's digest of the latest State and the trace
// rate. It is rebuilt once per reload, never per frame; views read it.
type session struct {
	now func() time.Time
	dir string
	// admin says where the admin API serves (Options.Admin); adminProblem
	// marks it as a problem.
	admin        string
	adminProblem bool
	state        *app.State // nil before the first State
	prev         *app.State // the state before, nil on the first load

	objects []objectEntry // output order (see eachObject)
	index   map[engine.ObjectKey]int
	// prevObjects are the previous state's objects, for status diffs.
	prevObjects map[engine.ObjectKey]objectEntry
	// changed holds the objects whose spec or status changed in the last
	// reload (lastTransitionTime ignored); removed ones are not listed.
	changed map[engine.ObjectKey]bool
	// flashing is set while changes are highlighted; flashGen tells stale
	// flash timers apart.
	flashing bool
	flashGen int

	problems                []problem
	errors, warnings, infos int
	// conflictsWith names, for each conflicted listener, the listener it
	// conflicts with (Finding.ConflictsWith).
	conflictsWith map[listenerRef]string
	rate          rateMeter
	traces        int // traces received in total
}

// objectEntry is one object of the current Result.
type objectEntry struct {
	key        engine.ObjectKey
	apiVersion string
	obj        metav1.Object
	src        engine.Source
}

// flashDoneMsg ends the highlight of the reload numbered gen.
type flashDoneMsg struct{ gen int }

// refreshMsg tells every view that the session changed and it should
// rebuild what it shows.
type refreshMsg struct{}

func newSession(dir string, now func() time.Time) *session {
	return &session{dir: dir, now: now, index: map[engine.ObjectKey]int{},
		changed: map[engine.ObjectKey]bool{}}
}

// apply digests a new state and returns whether anything visible changed
// since the previous one (which starts a highlight).
func (s *session) apply(msg *app.State) bool {
	prevProblems := map[string]bool{}
	for _, p := range s.problems {
		prevProblems[p.id()] = true
	}
	s.prev, s.state = s.state, msg
	s.prevObjects = make(map[engine.ObjectKey]objectEntry, len(s.objects))
	for _, o := range s.objects {
		s.prevObjects[o.key] = o
	}
	s.objects, s.index = nil, map[engine.ObjectKey]int{}
	if msg.Result != nil && msg.Result.Objects != nil {
		snap := msg.Result.Objects
		eachObject(snap, func(k engine.ObjectKey, apiVersion string, o metav1.Object) {
			s.index[k] = len(s.objects)
			s.objects = append(s.objects, objectEntry{key: k, apiVersion: apiVersion, obj: o, src: snap.SourceOf(k)})
		})
	}
	s.changed = map[engine.ObjectKey]bool{}
	if s.prev != nil {
		for _, o := range s.objects {
			old, ok := s.prevObjects[o.key]
			if !ok || !sameObject(old.obj, o.obj) {
				s.changed[o.key] = true
			}
		}
	}
	s.buildProblems(prevProblems)
	newProblems := false
	for _, p := range s.problems {
		newProblems = newProblems || p.isNew
	}
	return s.prev != nil && (len(s.changed) > 0 || newProblems || len(s.update().Changed) > 0)
}

// update is what the watcher loaded for the current state (the zero
// Update with an empty load before the first state, or when a state
// carries none).
func (s *session) update() watch.Update {
	if s.state == nil || s.state.Update == nil {
		return watch.Update{Result: &watch.LoadResult{}}
	}
	u := *s.state.Update
	if u.Result == nil {
		u.Result = &watch.LoadResult{}
	}
	return u
}

// object returns the current object named k.
func (s *session) object(k engine.ObjectKey) (objectEntry, bool) {
	i, ok := s.index[k]
	if !ok {
		return objectEntry{}, false
	}
	return s.objects[i], true
}

// isChanged reports whether k should be highlighted now.
func (s *session) isChanged(k engine.ObjectKey) bool {
	return s.flashing && s.changed[k]
}

// result returns the current translation (nil before the first state).
func (s *session) result() *engine.Result {
	if s.state == nil {
		return nil
	}
	return s.state.Result
}

// serving returns what the routing table does with a route (nil: no
// result, or not a route).
func (s *session) serving(k engine.ObjectKey) *engine.RouteServing {
	if res := s.result(); res != nil {
		return res.Routes[k]
	}
	return nil
}

// portReport returns the data plane's report for a Gateway port.
func (s *session) portReport(gateway string, port int32) (emulator.PortReport, bool) {
	if s.state == nil {
		return emulator.PortReport{}, false
	}
	if s.state.Ports == nil {
		return emulator.PortReport{}, false
	}
	for _, p := range s.state.Ports.Ports {
		if p.Gateway == gateway && p.Port == port {
			return p, true
		}
	}
	return emulator.PortReport{}, false
}

// changedSummary says what the last reload changed, for the status line.
func (s *session) changedSummary() string {
	if s.state == nil || s.prev == nil {
		return ""
	}
	files := "no file"
	changed := s.update().Changed
	switch n := len(changed); n {
	case 0:
	case 1:
		files = changed[0]
	default:
		files = fmt.Sprintf("%d files", n)
	}
	objs := make([]string, 0, len(s.changed))
	for k := range s.changed {
		objs = append(objs, k.String())
	}
	sort.Strings(objs)
	switch len(objs) {
	case 0:
		return "reloaded " + files + ": no object changed"
	case 1:
		return "reloaded " + files + ": changed " + objs[0]
	}
	return fmt.Sprintf("reloaded %s: %d objects changed", files, len(objs))
}

// countTraces counts a batch of traces, trimmed ones included, for the
// request rate.
func (s *session) countTraces(msg TracesMsg) {
	for _, t := range msg.Traces {
		s.rate.add(t.Time)
	}
	if len(msg.Traces) > 0 {
		s.rate.addN(msg.Traces[0].Time, msg.Trimmed)
	}
	s.traces += len(msg.Traces) + msg.Trimmed
}

// rateMeter counts requests per second over the last few seconds.
type rateMeter struct {
	secs   [rateWindow + 2]int64
	counts [rateWindow + 2]int
}

// rateWindow is how many seconds the request rate averages.
const rateWindow = 5

func (r *rateMeter) add(t time.Time) { r.addN(t, 1) }

// addN counts n requests at t.
func (r *rateMeter) addN(t time.Time, n int) {
	if n <= 0 {
		return
	}
	sec := t.Unix()
	i := int(sec % int64(len(r.secs)))
	if i < 0 {
		i = -i
	}
	if r.secs[i] != sec {
		r.secs[i], r.counts[i] = sec, 0
	}
	r.counts[i] += n
}

// perSecond is the mean rate over the rateWindow seconds up to now.
func (r *rateMeter) perSecond(now time.Time) float64 {
	end := now.Unix()
	n := 0
	for i, sec := range r.secs {
		if sec > end-rateWindow && sec <= end {
			n += r.counts[i]
		}
	}
	return float64(n) / rateWindow
}
