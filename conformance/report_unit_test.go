package conformance

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/yaml"
)

// testByName finds a v1.6.3 conformance test.
func testByName(t *testing.T, name string) suite.ConformanceTest {
	t.Helper()
	i := slices.IndexFunc(tests.ConformanceTests, func(c suite.ConformanceTest) bool { return c.ShortName == name })
	if i < 0 {
		t.Fatalf("no conformance test %s", name)
	}
	return tests.ConformanceTests[i]
}

// TestReportBuild: TCPRoute and UDPRoute tests count in the core of their
// profiles, tests in no profile land in otherTests (and count for the
// regression check), and the upstream form keeps upstream's fields only.
func TestReportBuild(t *testing.T) {
	r := newResults()
	r.record(testByName(t, "TCPRouteWeightedRouting"), passed, "")
	r.record(testByName(t, "UDPRoute"), failed, "")
	r.record(testByName(t, "HTTPRouteDisallowedKind"), passed, "")
	r.record(testByName(t, "MeshConsumerRoute"), notSupported, "MeshConsumerRoute: not claimed")
	r.record(testByName(t, "GatewayInvalidParametersRef"), notSupported, "GatewayInfrastructure: not claimed")
	impl := confv1.Implementation{Organization: "gwdev", Project: "gwdev", URL: "https://example.invalid", Version: "dev-abc"}
	rep := r.build(impl, "experimental", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

	byName := map[string]ProfileReport{}
	for _, p := range rep.ProfileReports {
		byName[p.Name] = p
	}
	if got := byName["GATEWAY-TCP"].Core.PassedTests; !slices.Equal(got, []string{"TCPRouteWeightedRouting"}) {
		t.Errorf("GATEWAY-TCP core passed %v", got)
	}
	if got := byName["GATEWAY-UDP"].Core; got.Result != confv1.Failure || !slices.Equal(got.FailedTests, []string{"UDPRoute"}) {
		t.Errorf("GATEWAY-UDP core %+v", got)
	}
	if o := rep.OtherTests; o == nil || !slices.Equal(o.PassedTests, []string{"HTTPRouteDisallowedKind"}) || !slices.Equal(o.NotSupportedTests, []string{"MeshConsumerRoute"}) {
		t.Errorf("otherTests %+v", rep.OtherTests)
	}
	if !rep.passedTests()["HTTPRouteDisallowedKind"] {
		t.Error("a test in no profile does not count for the regression check")
	}
	if rep.notRunTable() == "" || !containsLine(rep.notRunTable(), "GatewayInvalidParametersRef") || !containsLine(rep.notRunTable(), "MeshConsumerRoute") {
		t.Errorf("not-run table:\n%s", rep.notRunTable())
	}

	// The upstream form decodes strictly as upstream's type.
	data, err := yaml.Marshal(rep.upstream())
	if err != nil {
		t.Fatal(err)
	}
	var up confv1.ConformanceReport
	if err := yaml.UnmarshalStrict(data, &up); err != nil {
		t.Fatalf("upstream report does not decode as ConformanceReport: %v\n%s", err, data)
	}
	if len(up.ProfileReports) != len(profiles) || up.Kind != "ConformanceReport" || up.Implementation.Version != impl.Version {
		t.Errorf("upstream report %+v", up)
	}
	if got := upstreamReportName(rep); got != "experimental-dev-abc-default-report.yaml" {
		t.Errorf("upstream file name %s", got)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "experimental-dev-old-default-report.yaml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := writeUpstreamReport(dir, rep); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	if len(files) != 2 || filepath.Base(files[0]) != "README.md" || filepath.Base(files[1]) != upstreamReportName(rep) {
		t.Errorf("upstream folder holds %v", files)
	}
}

// TestReportRegressions: a test that passed in the baseline, in a profile
// or in none, and does not pass now is a regression.
func TestReportRegressions(t *testing.T) {
	base := &Report{ProfileReports: []ProfileReport{{Core: Status{PassedTests: []string{"A", "B"}}}},
		OtherTests: &Status{PassedTests: []string{"C"}}}
	cur := &Report{ProfileReports: []ProfileReport{{Core: Status{PassedTests: []string{"A"}}}}}
	if got := regressions(base, cur); !slices.Equal(got, []string{"B", "C"}) {
		t.Errorf("regressions %v", got)
	}
}

// TestReportFailedTests: every failed test counts once, in a profile's
// core or extended tests or among the tests in no profile, so that `make
// conformance` fails on any of them, not only on regressions.
func TestReportFailedTests(t *testing.T) {
	ext := &ExtendedStatus{Status: Status{FailedTests: []string{"B", "A"}}}
	rep := &Report{ProfileReports: []ProfileReport{{Core: Status{FailedTests: []string{"A"}}, Extended: ext},
		{Core: Status{FailedTests: []string{"C"}}}}, OtherTests: &Status{FailedTests: []string{"D"}}}
	if got := rep.failedTests(); !slices.Equal(got, []string{"A", "B", "C", "D"}) {
		t.Errorf("failed tests %v", got)
	}
	if got := (&Report{ProfileReports: []ProfileReport{{Core: Status{PassedTests: []string{"A"}}}}}).failedTests(); len(got) != 0 {
		t.Errorf("no failures: %v", got)
	}
}

// containsLine reports whether a Markdown table has a row for test.
func containsLine(table, test string) bool {
	return slices.ContainsFunc(strings.Split(table, "\n"), func(l string) bool { return strings.HasPrefix(l, "| "+test+" |") })
}
