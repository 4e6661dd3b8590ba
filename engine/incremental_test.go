package engine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	corev1 "k8s.io/api/core/v1"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/report"
)

// TestIncrementalEqualsFull: over every golden input, random edit
// sequences (objects removed, added back, copied under a new name, changed
// or saved unchanged: routes, Gateways, Services, ReferenceGrants,
// policies, any kind) are translated twice after every step: in full
// (TranslateNext) and incrementally (TranslateTableFirst given the
// previous incremental result, which reuses unchanged routes' compiled
// rules). The two must serialise to the same YAML (objects with status,
// table, findings, policies) and have the same Routes; the previous
// result must be left as it was (the data plane may still serve its table).
// Some steps must reuse routes, or the test proves nothing.
func TestIncrementalEqualsFull(t *testing.T) {
	ins, err := filepath.Glob("testdata/*.in.yaml")
	if err != nil || len(ins) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	steps := 6
	if testing.Short() || raceEnabled {
		// -race checks that the previous table is not written to, which
		// two steps show as well as six (make test runs both).
		steps = 2
	}
	var total reuseCount
	for i, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.yaml")
		rng := rand.New(rand.NewPCG(uint64(i), 28))
		t.Run(name, func(t *testing.T) {
			total.add(checkIncremental(t, loadGolden(t, in), rng, steps))
		})
	}
	if total.routes == 0 {
		t.Error("no step reused a compiled route")
	}
	if total.patched == 0 || total.vhostsKept == 0 {
		t.Errorf("no step patched a table (%d) or kept a virtual host (%d)", total.patched, total.vhostsKept)
	}
	t.Logf("%d routes reused; %d tables patched, keeping %d virtual hosts", total.routes, total.patched, total.vhostsKept)
}

// reuseCount is what the incremental translations of a test reused: routes'
// compiled rules, patched tables and the virtual hosts they kept.
type reuseCount struct{ routes, patched, vhostsKept int }

func (c *reuseCount) add(o reuseCount) {
	c.routes, c.patched, c.vhostsKept = c.routes+o.routes, c.patched+o.patched, c.vhostsKept+o.vhostsKept
}

// checkPatched checks a patched table against the previous one: every
// virtual host but the ones it says it rebuilt is the previous table's own
// (pointer), and it returns how many those are.
func checkPatched(t *testing.T, at string, prev, next *engine.Result) int {
	t.Helper()
	old := map[*engine.VirtualHost]bool{}
	for _, vh := range virtualHosts(prev.Table) {
		old[vh] = true
	}
	kept, all := 0, virtualHosts(next.Table)
	for _, vh := range all {
		if old[vh] {
			kept++
		}
	}
	if n := next.Reuse.VirtualHosts; len(all)-kept > n {
		t.Fatalf("%s: %d of %d virtual hosts are new, but the patch says it rebuilt %d", at, len(all)-kept, len(all), n)
	}
	return kept
}

// virtualHosts lists every virtual host of a table.
func virtualHosts(tab *engine.Table) []*engine.VirtualHost {
	var out []*engine.VirtualHost
	for _, gt := range tab.Gateways {
		for _, pt := range gt.Ports {
			for _, lt := range pt.Listeners {
				out = append(out, lt.VirtualHosts...)
			}
		}
	}
	return out
}

// checkIncremental runs steps random edits on snap and compares the two
// translations after each; it returns what they reused.
func checkIncremental(t *testing.T, snap *engine.Snapshot, rng *rand.Rand, steps int) reuseCount {
	e := newEditor(snap, rng)
	opts := engine.Options{Now: goldenNow}
	full := engine.TranslateNext(nil, e.snapshot(), opts)
	incr, finish := engine.TranslateTableFirst(nil, e.snapshot(), opts)
	finish()
	compareResults(t, "start", full, incr)
	var reused reuseCount
	for step := 1; step <= steps; step++ {
		what := e.edit(step)
		s := e.snapshot()
		opts.Now = metav1.NewTime(goldenNow.Add(time.Duration(step) * time.Second))
		before := resultYAML(t, incr)
		full = engine.TranslateNext(full, s, opts)
		stop := readConcurrently(incr.Table)
		next, finish := engine.TranslateTableFirst(incr, s, opts)
		// The data plane applies the new table while finish runs.
		applied := make(chan struct{})
		go func() {
			defer close(applied)
			_, _ = json.Marshal(next.Table)
		}()
		finish()
		<-applied
		stop()
		if after := resultYAML(t, incr); !bytes.Equal(before, after) {
			t.Fatalf("step %d (%s): the incremental translation changed the previous result", step, what)
		}
		at := fmt.Sprintf("step %d (%s)", step, what)
		compareResults(t, at, full, next)
		reused.routes += next.Reuse.Reused
		if next.Reuse.Patched {
			reused.patched++
			reused.vhostsKept += checkPatched(t, at, incr, next)
		}
		incr = next
		if t.Failed() {
			return reused
		}
	}
	return reused
}

func resultYAML(t *testing.T, r *engine.Result) []byte {
	t.Helper()
	b, err := report.ResultYAML(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func compareResults(t *testing.T, at string, full, incr *engine.Result) {
	t.Helper()
	if f, i := resultYAML(t, full), resultYAML(t, incr); !bytes.Equal(f, i) {
		t.Fatalf("%s: incremental result differs from the full translation:\n%s", at, lineDiff(string(f), string(i)))
	}
	if !reflect.DeepEqual(full.Routes, incr.Routes) {
		t.Fatalf("%s: Routes differ", at)
	}
	if err := incr.Table.Validate(); err != nil {
		t.Fatalf("%s: table does not validate: %v", at, err)
	}
}

// lineDiff shows the first differing lines.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d:\n full: %s\n incr: %s\nfull from there:\n%s\nincr from there:\n%s", i+1, x, y,
				strings.Join(al[max(0, i-8):min(len(al), i+12)], "\n"), strings.Join(bl[max(0, i-8):min(len(bl), i+12)], "\n"))
		}
	}
	return ""
}

// editor holds the objects of a snapshot under random edits.
type editor struct {
	rng     *rand.Rand
	objs    []metav1.Object
	removed []metav1.Object
	sources map[engine.ObjectKey]engine.Source
}

func newEditor(s *engine.Snapshot, rng *rand.Rand) *editor {
	e := &editor{rng: rng, sources: map[engine.ObjectKey]engine.Source{}}
	s.EachSource(func(k engine.ObjectKey, src engine.Source) { e.sources[k] = src })
	s.Each(func(_ engine.ObjectKey, o metav1.Object) { e.objs = append(e.objs, o) })
	return e
}

// snapshot builds a new Snapshot of the current objects (the objects
// themselves are shared, as the watcher shares unchanged ones).
func (e *editor) snapshot() *engine.Snapshot {
	s := &engine.Snapshot{Sources: e.sources}
	for _, o := range e.objs {
		s.AddObject(o)
	}
	return s
}

// edit applies one random edit and says what it did.
func (e *editor) edit(step int) string {
	if len(e.objs) == 0 {
		return "nothing to edit"
	}
	routes := e.indexes(func(o metav1.Object) bool { return engine.RouteOf(o) != nil })
	pick := func(idx []int) int {
		if len(idx) == 0 {
			return e.rng.IntN(len(e.objs))
		}
		return idx[e.rng.IntN(len(idx))]
	}
	switch n := e.rng.IntN(11); {
	case n == 10: // a route moved down its file (lines added above it): same object, new source
		if len(routes) == 0 {
			return "no route to move"
		}
		i := pick(routes)
		k := engine.RouteOf(e.objs[i]).Key()
		src := e.sources[k]
		src.Line += 10
		src.Fields = maps.Clone(src.Fields)
		for p, pos := range src.Fields {
			src.Fields[p] = engine.FieldPos{Line: pos.Line + 10, Column: pos.Column}
		}
		e.sources = maps.Clone(e.sources) // the previous snapshots keep theirs
		e.sources[k] = src
		return "moved down its file " + describe(e.objs[i])
	case n < 3: // change a route
		i := pick(routes)
		e.objs[i] = e.change(e.objs[i], step)
		return "changed " + describe(e.objs[i])
	case n < 4: // save a route unchanged (a new object, same content)
		i := pick(routes)
		e.objs[i] = deepCopy(e.objs[i])
		return "saved " + describe(e.objs[i])
	case n < 5: // copy a route under a new name
		i := pick(routes)
		c := deepCopy(e.objs[i])
		c.SetName(fmt.Sprintf("%s-copy%d", c.GetName(), step))
		e.objs = append(e.objs, c)
		return "added " + describe(c)
	case n < 6: // add back what an earlier step removed
		if len(e.removed) > 0 {
			o := e.removed[len(e.removed)-1]
			e.removed = e.removed[:len(e.removed)-1]
			e.objs = append(e.objs, o)
			return "added back " + describe(o)
		}
		fallthrough
	case n < 8: // remove any object
		i := e.rng.IntN(len(e.objs))
		o := e.objs[i]
		e.objs = append(e.objs[:i:i], e.objs[i+1:]...)
		e.removed = append(e.removed, o)
		return "removed " + describe(o)
	default: // change any object
		i := e.rng.IntN(len(e.objs))
		e.objs[i] = e.change(e.objs[i], step)
		return "changed " + describe(e.objs[i])
	}
}

func (e *editor) indexes(keep func(metav1.Object) bool) []int {
	var out []int
	for i, o := range e.objs {
		if keep(o) {
			out = append(out, i)
		}
	}
	return out
}

// change returns a changed copy of o: for the kinds whose fields decide
// most, a change that matters (a route's hostnames, rules or backendRefs,
// a Service's port, a Gateway listener's hostname, a ReferenceGrant's
// target); for every kind a new label.
func (e *editor) change(o metav1.Object, step int) metav1.Object {
	c := deepCopy(o)
	labels := map[string]string{}
	for k, v := range c.GetLabels() {
		labels[k] = v
	}
	labels["edit"] = fmt.Sprint(step)
	c.SetLabels(labels)
	switch x := c.(type) {
	case *gwv1.HTTPRoute:
		switch e.rng.IntN(8) {
		case 0:
			x.Spec.Hostnames = append(x.Spec.Hostnames, gwv1.Hostname(fmt.Sprintf("edit%d.example.com", step)))
		case 1:
			if len(x.Spec.Rules) > 0 {
				x.Spec.Rules = x.Spec.Rules[:len(x.Spec.Rules)-1]
			}
		case 2:
			for i := range x.Spec.Rules {
				for k := range x.Spec.Rules[i].BackendRefs {
					if p := x.Spec.Rules[i].BackendRefs[k].Port; p != nil {
						*p++
						return c
					}
				}
			}
		case 3:
			for i := range x.Spec.Rules {
				if len(x.Spec.Rules[i].BackendRefs) > 0 {
					x.Spec.Rules[i].BackendRefs[0].Name = "missing"
					return c
				}
			}
		case 4: // take another route's hostnames and rules: its rules now meet ours
			if o := e.other(x); o != nil {
				x.Spec.Hostnames = slices.Clone(o.Spec.Hostnames)
				x.Spec.Rules = o.DeepCopy().Spec.Rules
			}
		case 5: // move to another Gateway or listener
			e.moveParent(x)
		case 6: // serve any host, or exactly one
			if len(x.Spec.Hostnames) > 0 {
				x.Spec.Hostnames = nil
			} else {
				x.Spec.Hostnames = []gwv1.Hostname{gwv1.Hostname(fmt.Sprintf("edit%d.example.com", step))}
			}
		case 7: // older than every route: it now wins ties
			x.CreationTimestamp = metav1.NewTime(time.Date(2000, 1, 1, 0, 0, step, 0, time.UTC))
		}
	case *corev1.Service:
		if len(x.Spec.Ports) > 0 {
			x.Spec.Ports[0].Port++
		}
	case *gwv1.Gateway:
		if len(x.Spec.Listeners) > 0 {
			h := gwv1.Hostname(fmt.Sprintf("*.edit%d.example.com", step))
			x.Spec.Listeners[0].Hostname = &h
		}
	case *gwv1.ReferenceGrant:
		if len(x.Spec.To) > 0 {
			x.Spec.To[0].Kind = "Secret"
		}
	}
	return c
}

// other returns another HTTPRoute of the editor's, or nil.
func (e *editor) other(r *gwv1.HTTPRoute) *gwv1.HTTPRoute {
	var rs []*gwv1.HTTPRoute
	for _, o := range e.objs {
		if x, ok := o.(*gwv1.HTTPRoute); ok && (x.Name != r.Name || x.Namespace != r.Namespace) {
			rs = append(rs, x)
		}
	}
	if len(rs) == 0 {
		return nil
	}
	return rs[e.rng.IntN(len(rs))]
}

// moveParent points the route's first parentRef at a listener of a
// random Gateway (by sectionName, or the whole Gateway).
func (e *editor) moveParent(r *gwv1.HTTPRoute) {
	var gws []*gwv1.Gateway
	for _, o := range e.objs {
		if g, ok := o.(*gwv1.Gateway); ok {
			gws = append(gws, g)
		}
	}
	if len(gws) == 0 || len(r.Spec.ParentRefs) == 0 {
		return
	}
	g := gws[e.rng.IntN(len(gws))]
	ref := gwv1.ParentReference{Name: gwv1.ObjectName(g.Name)}
	if g.Namespace != r.Namespace {
		ns := gwv1.Namespace(g.Namespace)
		ref.Namespace = &ns
	}
	if n := len(g.Spec.Listeners); n > 0 && e.rng.IntN(2) == 0 {
		sec := g.Spec.Listeners[e.rng.IntN(n)].Name
		ref.SectionName = &sec
	}
	r.Spec.ParentRefs[0] = ref
}

// deepCopy copies a Kubernetes object (an object that cannot be copied is
// returned as it is: the edit is then a label change on a shared object,
// which no step makes).
func deepCopy(o metav1.Object) metav1.Object {
	if ro, ok := o.(runtime.Object); ok {
		if c, ok := ro.DeepCopyObject().(metav1.Object); ok {
			return c
		}
	}
	panic(fmt.Sprintf("cannot copy %T", o))
}

func describe(o metav1.Object) string {
	return fmt.Sprintf("%T %s/%s", o, o.GetNamespace(), o.GetName())
}

// readConcurrently reads tab once on another goroutine, as the data plane
// serving it does, and stop waits for it: nothing orders that read with the
// translation running meanwhile, so with -race a translation that writes to
// what the previous table holds (the rules it reuses) fails the test.
func readConcurrently(tab *engine.Table) (stop func()) {
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		_, _ = json.Marshal(tab)
	}()
	return func() { <-exited }
}

// FuzzIncremental is TestIncrementalEqualsFull with the golden input and
// the edit sequence's seed chosen by the fuzzer.
func FuzzIncremental(f *testing.F) {
	ins, err := filepath.Glob("testdata/*.in.yaml")
	if err != nil || len(ins) == 0 {
		f.Fatalf("no golden inputs: %v", err)
	}
	for i := range 8 {
		f.Add(uint(i*41), uint64(i))
	}
	f.Fuzz(func(t *testing.T, input uint, seed uint64) {
		in := ins[input%uint(len(ins))]
		checkIncremental(t, loadGolden(t, in), rand.New(rand.NewPCG(seed, 28)), 4)
	})
}
