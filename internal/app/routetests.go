package app

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/table"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/internal/routetest"
)

// TestOptions say what `gwdev test` runs.
type TestOptions struct {
	// Tests is a test file or a folder of them ("": the project folder,
	// every *.gwtest.yaml below it).
	Tests string
	// RequestTimeout bounds each request (0: 5 s).
	RequestTimeout time.Duration
	// Seed seeds the data plane's weighted picks, so that a split's shares
	// are the same on every run (0: DefaultTestSeed).
	Seed uint64

	// sendPause is a pause between a case's requests (tests: a slow
	// machine).
	sendPause time.Duration
}

// DefaultTestSeed is the seed of weighted picks when none is given.
const DefaultTestSeed = 1

// TestFilesError is a test file that does not parse, or an expectation no
// request could meet: `gwdev test` exits 2.
type TestFilesError struct{ Errs routetest.Errors }

func (e *TestFilesError) Error() string { return e.Errs.Error() }

// LoadTestFiles finds and parses the test files of o (or dir's), every
// error of every file in one TestFilesError.
func LoadTestFiles(dir string, o TestOptions) ([]*routetest.File, error) {
	where := o.Tests
	if where == "" {
		where = dir
	}
	paths, err := routetest.Find(where)
	if err != nil {
		return nil, fmt.Errorf("finding test files: %w", err)
	}
	if len(paths) == 0 {
		return nil, &TestFilesError{Errs: routetest.Errors{{File: where, Line: 1, Column: 1,
			Message: "no test files (*.gwtest.yaml) here: write one (docs/commands/test.md) or pass --tests PATH"}}}
	}
	var files []*routetest.File
	var errs routetest.Errors
	for _, p := range paths {
		f, err := routetest.ParseFile(p)
		if err != nil {
			var es routetest.Errors
			if ok := asErrors(err, &es); ok {
				errs = append(errs, es...)
				continue
			}
			return nil, err
		}
		files = append(files, f)
	}
	if len(errs) > 0 {
		return nil, &TestFilesError{Errs: errs}
	}
	return files, nil
}

func asErrors(err error, out *routetest.Errors) bool {
	es, ok := err.(routetest.Errors)
	if ok {
		*out = es
	}
	return ok
}

// RunTests runs the routing tests of dir (o.Tests: another file or
// folder): the project is loaded and translated once (project.Open), its
// table served by a data plane of its own on loopback (every port moved
// to a free one, so that a running gwdev up is not in the way), and each
// case sent by a real client; its trace, the answer and what the echo
// backend received are checked against the case (routetest.Check).
func RunTests(ctx context.Context, dir string, flags project.Flags, o TestOptions) (*routetest.Run, error) {
	files, err := LoadTestFiles(dir, o)
	if err != nil {
		return nil, err
	}
	return runFiles(ctx, dir, flags, o, files, true)
}

// runFiles serves dir and runs the cases of files, after judging their
// expectations possible when judge is set (not for cases being recorded).
func runFiles(ctx context.Context, dir string, flags project.Flags, o TestOptions, files []*routetest.File, judge bool) (*routetest.Run, error) {
	proj, err := project.Open([]string{dir}, flags)
	if err != nil {
		return nil, err
	}
	lr, err := proj.Load(nil)
	if err != nil {
		return nil, err
	}
	res := proj.Translate(lr.Snapshot, project.Translation{Now: metav1.NewTime(time.Now().UTC().Truncate(time.Second))})
	if errs := impossibleExpectations(res, files); judge && len(errs) > 0 {
		return nil, &TestFilesError{Errs: errs}
	}
	return runOnResult(ctx, res, dir, o, files)
}

// runOnResult serves res's table on free ports and runs the cases of
// files against it.
func runOnResult(ctx context.Context, res *engine.Result, dir string, o TestOptions, files []*routetest.File) (*routetest.Run, error) {
	seed := o.Seed
	if seed == 0 {
		seed = DefaultTestSeed
	}
	tr, err := startTestServer(res.Table, dir, seed)
	if err != nil {
		return nil, err
	}
	defer tr.close()
	tr.res, tr.timeout, tr.sendPause = res, o.RequestTimeout, o.sendPause
	if tr.timeout == 0 {
		tr.timeout = 5 * time.Second
	}
	run := &routetest.Run{Dir: dir}
	for _, f := range files {
		fr := routetest.FileResult{Path: f.Path}
		for i := range f.Cases {
			if ctx.Err() != nil {
				return run, ctx.Err()
			}
			fr.Cases = append(fr.Cases, tr.runCase(ctx, f, &f.Cases[i]))
		}
		run.Files = append(run.Files, fr)
	}
	return run, nil
}

// testServer is the data plane the tests run against: the project's table
// with every port moved to a free one.
type testServer struct {
	srv *emulator.Server
	res *engine.Result
	dir string
	// bound is where each Gateway port is served, by table Gateway name
	// and the port in the manifests; moved maps a served port back.
	bound     map[string]map[int32]string
	moved     map[int]int32
	timeout   time.Duration
	sendPause time.Duration
	// caseClock is the instant the data plane's rate limits count the
	// running case's requests at (Unix nanoseconds): a case's requests are
	// one burst however slowly the machine sends them, and each case
	// starts a day after the one before, every bucket drained, so that no
	// case depends on the cases before it.
	caseClock atomic.Int64
}

func startTestServer(tab *table.Table, dir string, seed uint64) (*testServer, error) {
	var err error
	for range 3 { // a port found free can be taken before it is bound
		var s *testServer
		if s, err = startTestServerOnce(tab, dir, seed); err == nil {
			return s, nil
		}
	}
	return nil, err
}

func startTestServerOnce(tab *table.Table, dir string, seed uint64) (*testServer, error) {
	s := &testServer{dir: dir, bound: map[string]map[int32]string{}, moved: map[int]int32{}}
	served := &table.Table{}
	if tab != nil {
		c := *tab
		served = &c
		served.Gateways = nil
		for _, g := range tab.Gateways {
			gc := *g
			gc.Ports = nil
			s.bound[g.Name] = map[int32]string{}
			for _, p := range g.Ports {
				pc := *p
				port, err := freePort(g.Address, p.Transport)
				if err != nil {
					return nil, err
				}
				pc.Port = int32(port)
				s.moved[port] = p.Port
				s.bound[g.Name][p.Port] = net.JoinHostPort(g.Address, strconv.Itoa(port))
				gc.Ports = append(gc.Ports, &pc)
			}
			served.Gateways = append(served.Gateways, &gc)
		}
	}
	s.srv = emulator.New(emulator.Config{Via: "test", TraceBuffer: 20000, UDPSessionTimeout: 200 * time.Millisecond, PickSeed: seed,
		RateLimitClock: func() time.Time { return time.Unix(0, s.caseClock.Load()) }})
	if err := s.srv.Apply(served).Err(); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

// freePort is a port on addr nothing listens on, for transport (TCP or UDP).
func freePort(addr, transport string) (int, error) {
	if transport == "UDP" {
		c, err := net.ListenPacket("udp", net.JoinHostPort(addr, "0"))
		if err != nil {
			return 0, fmt.Errorf("finding a free UDP port on %s: %w", addr, err)
		}
		defer c.Close()
		return c.LocalAddr().(*net.UDPAddr).Port, nil
	}
	return freeTCPPort(addr)
}

func (s *testServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.srv.Close(ctx)
}

// runCase sends one case (Count times) and checks it.
func (s *testServer) runCase(ctx context.Context, f *routetest.File, c *routetest.Case) routetest.CaseResult {
	start := time.Now()
	s.caseClock.Add(int64(24 * time.Hour))
	cr := routetest.CaseResult{Name: c.Name, Line: c.Line, Column: c.Column}
	defer func() { cr.Duration = time.Since(start) }()
	o := testProbeFlags(&c.Request, filepath.Dir(f.Path))
	probe, err := o.Probe(c.Request.URL)
	if err != nil {
		cr.Error = "the request cannot be sent: " + err.Error()
		return cr
	}
	ex, err := Explain(s.res, probe, c.Request.URL, c.Request.Gateway, s.dir)
	if err != nil {
		cr.Error = "the request cannot be sent: " + err.Error()
		return cr
	}
	n := max(c.Request.Count, 1)
	var a *routetest.Actual
	picks := map[string]int{}
	// limited is the first request a rate limit refused, limitedAt its number.
	var limited *routetest.Actual
	limitedAt := 0
	for i := range n {
		if i > 0 && s.sendPause > 0 {
			time.Sleep(s.sendPause)
		}
		one := s.send(ctx, c, probe, ex.Trace.Gateway)
		if a == nil {
			a = one
		}
		picks[one.Service]++
		if limited == nil && one.RateLimited != "" {
			limited, limitedAt = one, i+1
		}
	}
	a.RateLimited, a.RateLimitedStatus, a.RateLimitedAt = "", 0, 0
	if limited != nil {
		a.RateLimited, a.RateLimitedStatus, a.RateLimitedAt = limited.RateLimited, limited.Status, limitedAt
	}
	a.Requests = n
	if n > 1 {
		a.Shares = map[string]float64{}
		for svc, k := range picks {
			if svc != "" {
				a.Shares[svc] = float64(k) / float64(n)
			}
		}
	}
	cr.Actual = a
	cr.Mismatches = routetest.Check(c, a)
	if !cr.Passed() {
		var b bytes.Buffer
		ex.WriteText(&b)
		cr.Explain = b.String()
	}
	return cr
}

// testProbeFlags are explain's flags for a case's request.
func testProbeFlags(r *routetest.Request, fileDir string) *ProbeFlags {
	o := &ProbeFlags{Method: r.Method, MethodSet: r.Method != "", HTTP2: r.HTTP2, HTTP1: r.HTTP1}
	if o.Method == "" {
		o.Method = "GET"
	}
	names := make([]string, 0, len(r.Headers))
	for k := range r.Headers {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		o.Headers = append(o.Headers, k+": "+r.Headers[k])
	}
	if r.SNI != nil {
		o.SNI, o.SNISet = *r.SNI, true
	}
	if cc := r.ClientCert; cc != nil {
		o.CertFile, o.KeyFile = relTo(fileDir, cc.Cert), relTo(fileDir, cc.Key)
	}
	return o
}

func relTo(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// unmovePorts writes a served port in a Location back as the port of the
// manifests.
func (s *testServer) unmovePorts(loc string) string {
	if loc == "" {
		return ""
	}
	i := strings.Index(loc, "://")
	if i < 0 {
		return loc
	}
	rest := loc[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	host, port, err := net.SplitHostPort(rest[:end])
	if err != nil {
		return loc
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return loc
	}
	orig, ok := s.moved[p]
	if !ok {
		return loc
	}
	scheme := loc[:i]
	hp := net.JoinHostPort(host, strconv.Itoa(int(orig)))
	if (scheme == "http" && orig == 80) || (scheme == "https" && orig == 443) {
		hp = host
	}
	return scheme + "://" + hp + rest[end:]
}

// RecordTests sends each of urls once through dir's data plane, as RunTests
// does, and returns a test file whose cases expect what happened
// (routetest.ExpectFrom): `gwdev test --record` freezes today's routing
// before a change.
func RecordTests(ctx context.Context, dir string, flags project.Flags, urls []string, o TestOptions) (*routetest.File, error) {
	if len(urls) == 0 {
		return nil, fmt.Errorf("--record needs the URLs to record, as gwdev explain takes them")
	}
	f := &routetest.File{Path: "(record)"}
	for _, u := range urls {
		f.Cases = append(f.Cases, routetest.Case{Name: u, Request: routetest.Request{URL: u}})
	}
	run, err := runFiles(ctx, dir, flags, o, []*routetest.File{f}, false)
	if err != nil {
		return nil, err
	}
	for i, cr := range run.Files[0].Cases {
		if cr.Actual == nil {
			return nil, fmt.Errorf("%s: %s", urls[i], cr.Error)
		}
		f.Cases[i].Expect = routetest.ExpectFrom(cr.Actual)
	}
	return f, nil
}

// TestFileYAML is f as a test file, with a comment line saying where it
// came from, validated against the schema before it is returned.
func TestFileYAML(f *routetest.File, comment string) ([]byte, error) {
	b, err := report.YAML(f)
	if err != nil {
		return nil, err
	}
	out := append([]byte("# "+comment+"\n"), b...)
	if _, err := routetest.Parse("(recorded)", out); err != nil {
		return nil, fmt.Errorf("the recorded cases do not parse back: %w", err)
	}
	return out, nil
}

// UpdateTests rewrites the expectations that failed in run to what
// happened (gwdev test --update), file by file, and returns a line per
// field changed or left (routetest.Update).
func UpdateTests(run *routetest.Run) ([]string, error) {
	var notes []string
	for _, fr := range run.Files {
		failed := false
		for i := range fr.Cases {
			failed = failed || !fr.Cases[i].Passed()
		}
		if !failed {
			continue
		}
		n, err := routetest.Update(fr.Path, fr)
		if err != nil {
			return notes, err
		}
		notes = append(notes, n...)
	}
	return notes, nil
}
