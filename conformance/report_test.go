package conformance

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/sets"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/consts"
	"sigs.k8s.io/gateway-api/pkg/features"
	"sigs.k8s.io/yaml"
)

// outcome is what became of one conformance test.
type outcome string

const (
	passed       outcome = "passed"
	failed       outcome = "failed"
	skipped      outcome = "skipped"       // gwdev claims the feature but skips the test for now
	notSupported outcome = "not-supported" // gwdev does not claim one of its features
)

// results collects outcomes as tests finish (parallel tests finish in any
// order).
type results struct {
	mu      sync.Mutex
	tests   map[string]suite.ConformanceTest
	outcome map[string]outcome
	reason  map[string]string
}

func newResults() *results {
	return &results{tests: map[string]suite.ConformanceTest{}, outcome: map[string]outcome{}, reason: map[string]string{}}
}

func (r *results) record(test suite.ConformanceTest, o outcome, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.tests[test.ShortName] = test
	r.outcome[test.ShortName] = o
	if reason != "" {
		r.reason[test.ShortName] = reason
	}
}

// Report is conformance/report.yaml: upstream's ConformanceReport
// (sigs.k8s.io/gateway-api/conformance/apis/v1), field for field, plus what
// upstream leaves out: the names of passed and not-supported tests and why
// each skipped or not-supported test did not run.
type Report struct {
	APIVersion                string `json:"apiVersion"`
	Kind                      string `json:"kind"`
	confv1.Implementation     `json:"implementation"`
	Date                      string          `json:"date"`
	GatewayAPIVersion         string          `json:"gatewayAPIVersion"`
	Mode                      string          `json:"mode"`
	GatewayAPIChannel         string          `json:"gatewayAPIChannel"`
	ProfileReports            []ProfileReport `json:"profiles"`
	SucceededProvisionalTests []string        `json:"succeededProvisionalTests,omitempty"`
	// OtherTests are the tests in no reported profile (a gwdev addition):
	// the suite runs those whose features are supported but counts them in
	// no profile. Mesh tests are here, not supported.
	OtherTests *Status `json:"otherTests,omitempty"`
	// GwdevTests are gwdev's own tests of claimed features upstream's
	// tests do not check (gwdevtests_test.go; a gwdev addition), counted in
	// no profile.
	GwdevTests *Status `json:"gwdevTests,omitempty"`
	// SkipReasons maps each skipped or not-supported test to why it did not
	// run (a gwdev addition).
	SkipReasons map[string]string `json:"skipReasons,omitempty"`
}

// ProfileReport is upstream's ProfileReport with gwdev's Status.
type ProfileReport struct {
	Name     string          `json:"name"`
	Summary  string          `json:"summary"`
	Core     Status          `json:"core"`
	Extended *ExtendedStatus `json:"extended,omitempty"`
}

// ExtendedStatus is upstream's ExtendedStatus with gwdev's Status.
type ExtendedStatus struct {
	Status              `json:",inline"`
	SupportedFeatures   []string `json:"supportedFeatures,omitempty"`
	UnsupportedFeatures []string `json:"unsupportedFeatures,omitempty"`
}

// Status is upstream's Status plus PassedTests and NotSupportedTests.
type Status struct {
	confv1.Result     `json:"result"`
	confv1.Statistics `json:"statistics"`
	SkippedTests      []string `json:"skippedTests,omitempty"`
	FailedTests       []string `json:"failedTests,omitempty"`
	// PassedTests lists the tests that passed (a gwdev addition; the
	// regression check compares it with the committed report).
	PassedTests []string `json:"passedTests,omitempty"`
	// NotSupportedTests lists the tests of features gwdev does not claim
	// (a gwdev addition; upstream counts them nowhere).
	NotSupportedTests []string `json:"notSupportedTests,omitempty"`
}

// build compiles the report the way upstream's suite does
// (profileReportsMap.addTestResults and compileResults), adding test names.
func (r *results) build(impl confv1.Implementation, channel string, now time.Time) *Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.outcome))
	for n := range r.outcome {
		names = append(names, n)
	}
	sort.Strings(names)
	supported := supportedFeatures()
	rep := &Report{
		APIVersion: confv1.GroupVersion.String(), Kind: "ConformanceReport",
		Implementation: impl, Date: now.UTC().Format(time.RFC3339),
		GatewayAPIVersion: consts.BundleVersion, GatewayAPIChannel: channel, Mode: "default",
		SkipReasons: map[string]string{},
	}
	rep.OtherTests = &Status{}
	gwdev := &Status{}
	for _, n := range names {
		switch {
		case isGwdevTest(n):
			r.add(rep, gwdev, n)
		case len(testProfiles(r.tests[n])) == 0:
			r.add(rep, rep.OtherTests, n)
		}
	}
	rep.OtherTests.Result = result(*rep.OtherTests)
	names = slices.DeleteFunc(names, isGwdevTest)
	if gwdev.Passed+gwdev.Failed+gwdev.Skipped > 0 || len(gwdev.NotSupportedTests) > 0 {
		gwdev.Result = result(*gwdev)
		rep.GwdevTests = gwdev
	}
	for _, p := range profiles {
		pr := ProfileReport{Name: string(p.Name)}
		for _, n := range names {
			test := r.tests[n]
			if !slices.ContainsFunc(testProfiles(test), func(q suite.ConformanceProfile) bool { return q.Name == p.Name }) {
				continue
			}
			st := &pr.Core
			if isExtended(p, test) {
				if pr.Extended == nil {
					pr.Extended = &ExtendedStatus{}
				}
				st = &pr.Extended.Status
			}
			r.add(rep, st, n)
		}
		pr.Core.Result = result(pr.Core)
		pr.Summary = "Core tests " + summary(pr.Core)
		if pr.Extended != nil {
			pr.Extended.Result = result(pr.Extended.Status)
			pr.Summary += ". Extended tests " + summary(pr.Extended.Status)
			for _, f := range sortedFeatures(p.ExtendedFeatures.Intersection(supported)) {
				pr.Extended.SupportedFeatures = append(pr.Extended.SupportedFeatures, f)
			}
			for _, f := range sortedFeatures(p.ExtendedFeatures.Difference(supported)) {
				pr.Extended.UnsupportedFeatures = append(pr.Extended.UnsupportedFeatures, f)
			}
		}
		pr.Summary += "."
		rep.ProfileReports = append(rep.ProfileReports, pr)
	}
	sort.Strings(rep.SucceededProvisionalTests)
	return rep
}

// add counts test n's outcome in st (r.mu held).
func (r *results) add(rep *Report, st *Status, n string) {
	switch r.outcome[n] {
	case passed:
		st.Passed++
		st.PassedTests = append(st.PassedTests, n)
		if r.tests[n].Provisional && !slices.Contains(rep.SucceededProvisionalTests, n) {
			rep.SucceededProvisionalTests = append(rep.SucceededProvisionalTests, n)
		}
	case failed:
		st.Failed++
		st.FailedTests = append(st.FailedTests, n)
	case skipped:
		st.Skipped++
		st.SkippedTests = append(st.SkippedTests, n)
		rep.SkipReasons[n] = r.reason[n]
	case notSupported:
		st.NotSupportedTests = append(st.NotSupportedTests, n)
		rep.SkipReasons[n] = r.reason[n]
	}
}

func result(s Status) confv1.Result {
	switch {
	case s.Failed > 0:
		return confv1.Failure
	case s.Skipped > 0:
		return confv1.Partial
	}
	return confv1.Success
}

func summary(s Status) string {
	switch s.Result {
	case confv1.Partial:
		return fmt.Sprintf("partially succeeded with %d test skips", s.Skipped)
	case confv1.Failure:
		return fmt.Sprintf("failed with %d test failures", s.Failed)
	}
	return "succeeded"
}

func sortedFeatures(s sets.Set[features.FeatureName]) []string {
	out := make([]string, 0, len(s))
	for f := range s {
		out = append(out, string(f))
	}
	sort.Strings(out)
	return out
}

// writeReport writes the report as YAML with a header saying it is
// generated.
func writeReport(path string, rep *Report) error {
	data, err := yaml.Marshal(rep)
	if err != nil {
		return fmt.Errorf("encoding the report: %w", err)
	}
	header := "# Generated by `make conformance` (conformance/harness_test.go). Do not edit.\n"
	return os.WriteFile(path, append([]byte(header), data...), 0o644)
}

// readReport reads a report written by writeReport.
func readReport(path string) (*Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	if err := yaml.UnmarshalStrict(data, rep); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", path, err)
	}
	return rep, nil
}

// passedTests returns every test a report lists as passed, in any profile
// or in none.
func (rep *Report) passedTests() map[string]bool {
	return rep.testsIn(func(s *Status) []string { return s.PassedTests })
}

// testsIn collects the names list gives of every Status of the report:
// the profiles' core and extended ones, the tests in no profile and
// gwdev's own tests.
func (rep *Report) testsIn(list func(*Status) []string) map[string]bool {
	out := map[string]bool{}
	add := func(s *Status) {
		for _, n := range list(s) {
			out[n] = true
		}
	}
	if rep.OtherTests != nil {
		add(rep.OtherTests)
	}
	if rep.GwdevTests != nil {
		add(rep.GwdevTests)
	}
	for i := range rep.ProfileReports {
		p := &rep.ProfileReports[i]
		add(&p.Core)
		if p.Extended != nil {
			add(&p.Extended.Status)
		}
	}
	return out
}

// regressions returns the tests that passed in base and do not pass in cur.
func regressions(base, cur *Report) []string {
	now := cur.passedTests()
	var out []string
	for n := range base.passedTests() {
		if !now[n] {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// summaryTable renders the per-profile counts as a Markdown table.
func (rep *Report) summaryTable() string {
	var b strings.Builder
	b.WriteString("| profile | core | core passed / failed / skipped | extended | extended passed / failed / skipped | not claimed |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, p := range rep.ProfileReports {
		ext, extCounts, notClaimed := "—", "—", len(p.Core.NotSupportedTests)
		if p.Extended != nil {
			ext = string(p.Extended.Result)
			extCounts = fmt.Sprintf("%d / %d / %d", p.Extended.Passed, p.Extended.Failed, p.Extended.Skipped)
			notClaimed += len(p.Extended.NotSupportedTests)
		}
		fmt.Fprintf(&b, "| %s | %s | %d / %d / %d | %s | %s | %d |\n", p.Name, p.Core.Result,
			p.Core.Passed, p.Core.Failed, p.Core.Skipped, ext, extCounts, notClaimed)
	}
	return b.String()
}

// notRunTable lists every test that did not run, with why, as a Markdown
// table.
func (rep *Report) notRunTable() string {
	var names []string
	for n := range rep.SkipReasons {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "Every test runs.\n"
	}
	var b strings.Builder
	b.WriteString("| test | why it does not run |\n| --- | --- |\n")
	for _, n := range names {
		fmt.Fprintf(&b, "| %s | %s |\n", n, strings.ReplaceAll(rep.SkipReasons[n], "|", "\\|"))
	}
	return b.String()
}

// otherTestsLine says what became of the tests in no reported profile.
func (rep *Report) otherTestsLine() string {
	o := rep.OtherTests
	if o == nil {
		return ""
	}
	list := func(ns []string) string {
		if len(ns) == 0 {
			return "none"
		}
		return strings.Join(ns, ", ")
	}
	return fmt.Sprintf("Tests in no single profile (run when gwdev supports all their features, counted in no profile, as upstream does): "+
		"passed: %s; failed: %s; skipped: %s; not run: %s.\n",
		list(o.PassedTests), list(o.FailedTests), list(o.SkippedTests), list(o.NotSupportedTests))
}

// updateReadme replaces what is between the given markers of a README
// with the report's summary: the per-profile table and, with details, the
// tests in no profile and every non-mesh test that did not run.
func updateReadme(path, marker string, rep *Report, details bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	start, end := "<!-- "+marker+":start -->\n", "<!-- "+marker+":end -->"
	before, rest, ok1 := strings.Cut(string(data), start)
	_, after, ok2 := strings.Cut(rest, end)
	if !ok1 || !ok2 {
		return fmt.Errorf("%s has no %s markers", path, marker)
	}
	text := fmt.Sprintf("gwdev %s, Gateway API %s, %s:\n\n%s", rep.Version, rep.GatewayAPIVersion, rep.Date[:10], rep.summaryTable())
	if details {
		text += "\n" + rep.otherTestsLine() + "\nTests of " + rep.GatewayAPIVersion + " that do not run, and why:\n\n" + rep.notRunTable()
	}
	return os.WriteFile(path, []byte(before+start+text+end+after), 0o644)
}

// TestNoRegression compares the report of the last run (-gwdev.report)
// with the committed one (-gwdev.baseline): a test that passed there and
// does not pass now fails it. `make conformance` runs it after the suite.
func TestNoRegression(t *testing.T) {
	if *baselinePath == "" {
		t.Skip("no -gwdev.baseline given")
	}
	cur, err := readReport(*reportPath)
	if err != nil {
		t.Fatalf("reading the report of this run (did the suite crash? see conformance/conformance.log): %v", err)
	}
	base, err := readReport(*baselinePath)
	if os.IsNotExist(err) {
		t.Logf("no committed report at %s: nothing to compare with", *baselinePath)
		base = &Report{}
	} else if err != nil {
		t.Fatalf("reading the committed report: %v", err)
	}
	t.Logf("conformance summary (%s):\n%s", cur.Date, cur.summaryTable())
	for _, p := range cur.ProfileReports {
		failedTests := slices.Clone(p.Core.FailedTests)
		if p.Extended != nil {
			failedTests = append(failedTests, p.Extended.FailedTests...)
		}
		if len(failedTests) > 0 {
			t.Logf("%s: failing: %s", p.Name, strings.Join(failedTests, ", "))
		}
	}
	reg := regressions(base, cur)
	failing := cur.failedTests()
	if *recheck && len(failing) > 0 {
		var flaky []string
		failing, flaky = recheckAlone(t, failing)
		if len(flaky) > 0 {
			t.Logf("FLAKY (failed in the full run, passed when re-run alone; not counted): %s", strings.Join(flaky, ", "))
		}
		reg = slices.DeleteFunc(reg, func(n string) bool { return slices.Contains(flaky, n) })
	}
	if len(reg) > 0 {
		t.Errorf("tests that passed in the committed report fail now: %s", strings.Join(reg, ", "))
	}
	// Any failing conformance test fails the run, not only a regression: a
	// failure committed in the report must not pass CI.
	if len(failing) > 0 {
		t.Errorf("failing conformance tests: %s", strings.Join(failing, ", "))
	}
}

// failedTests lists every failed test of the report, in the profiles and
// among the tests in no profile, once each, sorted.
func (rep *Report) failedTests() []string {
	out := slices.Collect(maps.Keys(rep.testsIn(func(s *Status) []string { return s.FailedTests })))
	sort.Strings(out)
	return out
}

// recheckAlone re-runs each regressed test once, alone (-gwdev.only), in a
// new process of this test binary: statistical and timing tests can fail
// on a loaded machine. It returns the tests that failed again (regressions)
// and those that passed (flaky).
func recheckAlone(t *testing.T, tests []string) (failedAgain, flaky []string) {
	for _, name := range tests {
		args := []string{"-test.run", "^TestConformance$", "-test.count", "1", "-test.timeout", "20m",
			"-gwdev.conformance", "-gwdev.only", name}
		if testing.Verbose() {
			args = append(args, "-test.v")
		}
		cmd := exec.Command(os.Args[0], args...)
		out, err := cmd.CombinedOutput()
		logPath := "recheck-" + name + ".log"
		_ = os.WriteFile(logPath, out, 0o644)
		if err != nil {
			t.Logf("re-run of %s alone failed too (%v; see conformance/%s)", name, err, logPath)
			failedAgain = append(failedAgain, name)
			continue
		}
		t.Logf("re-run of %s alone passed", name)
		flaky = append(flaky, name)
	}
	return failedAgain, flaky
}
