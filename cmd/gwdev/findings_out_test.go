package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/internal/report"
)

// sarifSchema compiles the SARIF 2.1.0 JSON schema vendored from the OASIS
// sarif-spec repository (testdata/sarif-schema-2.1.0.json, its
// sarif-2.1/schema file).
func sarifSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "sarif-schema-2.1.0.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	const url = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile(url)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkSARIF validates out against the schema and checks what GitHub code
// scanning needs beyond it: every result's rule exists at its index and
// has help text, and results with a file have a line.
func checkSARIF(t *testing.T, schema *jsonschema.Schema, label, out string) report.SARIFLog {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(out))
	if err != nil {
		t.Fatalf("%s: not JSON: %v", label, err)
	}
	if err := schema.Validate(inst); err != nil {
		t.Errorf("%s: not valid SARIF 2.1.0: %v", label, err)
	}
	var log report.SARIFLog
	if err := json.Unmarshal([]byte(out), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 1 {
		t.Fatalf("%s: %d runs", label, len(log.Runs))
	}
	run := log.Runs[0]
	seen := map[string]bool{}
	for _, r := range run.Tool.Driver.Rules {
		if seen[r.ID] {
			t.Errorf("%s: rule %s twice", label, r.ID)
		}
		seen[r.ID] = true
		if r.Help.Text == "" || r.ShortDescription.Text == "" {
			t.Errorf("%s: rule %s has no help text", label, r.ID)
		}
	}
	for _, r := range run.Results {
		if r.RuleIndex >= len(run.Tool.Driver.Rules) || run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID {
			t.Errorf("%s: result's ruleIndex %d does not name rule %s", label, r.RuleIndex, r.RuleID)
		}
		// GitHub code scanning refuses a result without a physical location.
		if len(r.Locations) == 0 || r.Locations[0].PhysicalLocation == nil || r.Locations[0].PhysicalLocation.ArtifactLocation.URI == "" ||
			r.Locations[0].PhysicalLocation.Region == nil || r.Locations[0].PhysicalLocation.Region.StartLine < 1 {
			t.Errorf("%s: result without a file: %s", label, r.Message.Text)
		}
	}
	for _, n := range run.Invocations[0].Notifications {
		if r := n.Descriptor; r.Index >= len(run.Tool.Driver.Notifications) || run.Tool.Driver.Notifications[r.Index].ID != r.ID {
			t.Errorf("%s: notification's descriptor %+v", label, r)
		}
	}
	// Only rules that have results are declared (a rule without one is
	// listed by code scanning as a check that found nothing).
	for _, r := range run.Tool.Driver.Rules {
		if !slices.ContainsFunc(run.Results, func(res report.SARIFResult) bool { return res.RuleID == r.ID }) {
			t.Errorf("%s: rule %s is declared with no result", label, r.ID)
		}
	}
	return log
}

// brokenFolder is a folder with a manifest the loader refuses (a field
// that is not in the schema, at a known line and column) next to a route
// whose parent refuses it.
func brokenFolder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("gw.yaml", `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  listeners:
  - name: http
    protocol: HTTP
    port: 80
    hostname: a.example
`)
	write("route.yaml", `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: r}
spec:
  parentRefs: [{name: gw}]
  hostnames: [b.example]
  rules:
  - backendRefs: [{name: svc, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: typo}
spec:
  parentRefs: [{name: gw}]
  rulez: []
`)
	return dir
}

func TestCheckSARIFIsValid(t *testing.T) {
	schema := sarifSchema(t)
	broken := brokenFolder(t)
	for _, dir := range []string{"../../samples/cross-namespace", "../../samples/conflicts", "../../samples/shadowed", "../../samples/basic", broken} {
		out, errOut, code := runGwdev(t, "", "check", "--format", "sarif", dir)
		if code == exitUsage {
			t.Fatalf("%s: exit %d: %s", dir, code, errOut)
		}
		log := checkSARIF(t, schema, dir, out)
		var fs []report.Finding
		j, _, _ := runGwdev(t, "", "check", "-o", "json", dir)
		var list struct {
			Findings []report.Finding `json:"findings"`
		}
		if err := json.Unmarshal([]byte(j), &list); err != nil {
			t.Fatal(err)
		}
		fs = list.Findings
		withFile := 0
		for _, f := range fs {
			if f.File != "" {
				withFile++
			}
		}
		if got, n := len(log.Runs[0].Results), len(log.Runs[0].Invocations[0].Notifications); got != withFile || got+n != len(fs) {
			t.Errorf("%s: %d SARIF results and %d notifications; %d findings in -o json, %d with a file", dir, got, n, len(fs), withFile)
		}
	}
	// The folder with a refused manifest and a refused route: both are
	// results with their file, line (and the loader's column).
	out, _, code := runGwdev(t, "", "check", "--format", "sarif", broken)
	if code != exitProblems {
		t.Errorf("exit %d, want %d", code, exitProblems)
	}
	log := checkSARIF(t, schema, "broken", out)
	// The schema does catch a wrong log: a level SARIF does not know.
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(strings.Replace(out, `"level": "error"`, `"level": "fatal"`, 1)))
	if schema.Validate(bad) == nil {
		t.Error("the schema accepts level fatal")
	}
	byRule := map[string]report.SARIFResult{}
	for _, r := range log.Runs[0].Results {
		byRule[r.RuleID] = r
	}
	load, ok := byRule[report.CodeLoadError]
	if !ok || load.Level != "error" || load.Locations[0].PhysicalLocation.Region.StartLine != 15 || load.Locations[0].PhysicalLocation.Region.StartColumn != 3 {
		t.Errorf("the refused manifest is not an error at route.yaml:15:3: %+v", load)
	}
	if !strings.HasSuffix(load.Locations[0].PhysicalLocation.ArtifactLocation.URI, "/route.yaml") {
		t.Errorf("uri %q", load.Locations[0].PhysicalLocation.ArtifactLocation.URI)
	}
	host, ok := byRule["NoMatchingListenerHostname"]
	if !ok || host.Level != "error" || host.Locations[0].PhysicalLocation.Region.StartLine != 5 ||
		!strings.Contains(host.Message.Text, "Hint: none of the route's hostnames") {
		t.Errorf("the refused route is not an error at route.yaml:5 with its hint: %+v", host)
	}
}

func TestDiffSARIFIsValid(t *testing.T) {
	schema := sarifSchema(t)
	_, dir, _ := gitRepoForTest(t)
	out, _, code := runGwdev(t, "", "diff", "--format", "sarif", dir)
	if code != exitProblems {
		t.Fatalf("exit %d", code)
	}
	log := checkSARIF(t, schema, "diff", out)
	levels := map[string]int{}
	for _, r := range log.Runs[0].Results {
		levels[r.Level]++
		if r.RuleID == "condition-worse" && !strings.Contains(r.Message.Text, "NoMatchingParent") {
			t.Errorf("condition-worse: %s", r.Message.Text)
		}
	}
	if levels["error"] < 2 || levels["warning"] != 1 || levels["note"] < 3 {
		t.Errorf("levels %v, want ≥2 errors, 1 warning, ≥3 notes:\n%s", levels, out)
	}
}

// workflowCommand parses `::level props::message` back.
var workflowCommand = regexp.MustCompile(`^::(error|warning|notice) ([^:]*)::(.*)$`)

func unescapeWorkflow(s string) string {
	return strings.NewReplacer("%0A", "\n", "%0D", "\r", "%3A", ":", "%2C", ",", "%25", "%").Replace(s)
}

// TestCheckGitHubFormatParsesBack reads check's annotations back and finds
// in them, field for field, the findings -o json lists.
func TestCheckGitHubFormatParsesBack(t *testing.T) {
	broken := brokenFolder(t)
	out, _, code := runGwdev(t, "", "check", "--format", "github", broken)
	if code != exitProblems {
		t.Errorf("exit %d, want %d", code, exitProblems)
	}
	j, _, _ := runGwdev(t, "", "check", "-o", "json", broken)
	var list struct {
		Findings []report.Finding `json:"findings"`
	}
	if err := json.Unmarshal([]byte(j), &list); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(list.Findings)+1 {
		t.Fatalf("%d lines for %d findings:\n%s", len(lines), len(list.Findings), out)
	}
	if last := lines[len(lines)-1]; last != "gwdev check: 3 errors, 0 warnings, 1 note" {
		t.Errorf("summary line %q", last)
	}
	for i, l := range lines[:len(lines)-1] {
		m := workflowCommand.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("not a workflow command: %q", l)
		}
		props := map[string]string{}
		for _, p := range strings.Split(m[2], ",") {
			k, v, _ := strings.Cut(p, "=")
			props[k] = unescapeWorkflow(v)
		}
		f := list.Findings[i]
		if m[1] != report.GitHubLevel(f.Severity) || props["file"] != filepath.ToSlash(f.File) ||
			(f.Line > 0 && props["line"] != strconv.Itoa(f.Line)) || (f.Column > 0 && props["col"] != strconv.Itoa(f.Column)) {
			t.Errorf("annotation %q does not carry finding %+v", l, f)
		}
		msg := unescapeWorkflow(m[3])
		if !strings.Contains(msg, f.Message) || (f.Hint != "" && !strings.HasSuffix(msg, "\nHint: "+f.Hint)) {
			t.Errorf("message %q lacks %q or its hint", msg, f.Message)
		}
		if f.Object != nil && props["title"] != "gwdev: "+f.Object.String()+strings.TrimRight(" "+f.Scope, " ") {
			t.Errorf("title %q for %s", props["title"], f.Object)
		}
	}
	if !strings.Contains(out, "::error file="+filepath.ToSlash(broken)+"/route.yaml,line=15,col=3,title=gwdev%3A HTTPRoute/default/typo::") {
		t.Errorf("no annotation at route.yaml:15:3 for the refused manifest:\n%s", out)
	}
}

// TestCheckMachineOutputsCarryFindings: -o json's List and -o yaml's last
// document hold the same findings, with parent, field, file, line, hint.
func TestCheckMachineOutputsCarryFindings(t *testing.T) {
	dir := "../../samples/cross-namespace"
	j, _, code := runGwdev(t, "", "check", "-o", "json", dir)
	if code != exitProblems {
		t.Fatalf("exit %d", code)
	}
	var list struct {
		Kind     string            `json:"kind"`
		Items    []json.RawMessage `json:"items"`
		Findings []report.Finding  `json:"findings"`
	}
	if err := json.Unmarshal([]byte(j), &list); err != nil {
		t.Fatal(err)
	}
	if list.Kind != "List" || len(list.Items) == 0 {
		t.Fatalf("not a List of objects: %s", j[:200])
	}
	var found bool
	for _, f := range list.Findings {
		if f.Code == "NotAllowedByListeners" {
			found = true
			if f.Severity != "error" || f.Object.String() != "HTTPRoute/sandbox/experiment" || f.Parent == nil ||
				f.Parent.String() != "Gateway/infra/shared" || f.Field != "spec.parentRefs[0]" ||
				f.File != "../../samples/cross-namespace/sandbox.yaml" || f.Line == 0 || f.Condition != "Accepted=False" ||
				!strings.Contains(f.Hint, "allowedRoutes") {
				t.Errorf("finding %+v", f)
			}
		}
	}
	if !found {
		t.Errorf("no NotAllowedByListeners finding: %+v", list.Findings)
	}

	y, _, _ := runGwdev(t, "", "check", "-o", "yaml", dir)
	docs := strings.Split(y, "\n---\n")
	var last struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Findings   []report.Finding `json:"findings"`
	}
	if err := yaml.UnmarshalStrict([]byte(docs[len(docs)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if last.Kind != "CheckFindings" || last.APIVersion != "gwdev.dev/v1alpha1" {
		t.Errorf("last document is %s %s", last.APIVersion, last.Kind)
	}
	a, _ := json.Marshal(last.Findings)
	b, _ := json.Marshal(list.Findings)
	if !bytes.Equal(a, b) {
		t.Errorf("-o yaml's findings differ from -o json's:\n%s\n%s", a, b)
	}

	// A folder without problems still says so: "findings": [].
	j, _, _ = runGwdev(t, "", "check", "-o", "json", "../../samples/basic")
	if !strings.Contains(j, `"findings": [`) {
		t.Errorf("no findings key for a clean folder")
	}
}

// TestCIDocSARIFJob reads the code-scanning job of docs/ci.md, runs each
// of its gwdev steps on a sample in place of deploy/gateway, and checks
// that the file the upload step names holds valid SARIF 2.1.0.
func TestCIDocSARIFJob(t *testing.T) {
	b, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "upload-sarif")
	start := strings.LastIndex(doc[:i], "```yaml\n")
	end := strings.Index(doc[i:], "```")
	if i < 0 || start < 0 || end < 0 {
		t.Fatal("docs/ci.md has no job with upload-sarif")
	}
	var wf struct {
		Permissions map[string]string `json:"permissions"`
		Jobs        map[string]struct {
			Steps []struct {
				Name string            `json:"name"`
				Run  string            `json:"run"`
				Uses string            `json:"uses"`
				With map[string]string `json:"with"`
			} `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(doc[start+len("```yaml\n"):i+end]), &wf); err != nil {
		t.Fatal(err)
	}
	if wf.Permissions["security-events"] != "write" {
		t.Error("the job cannot upload SARIF without security-events: write")
	}
	schema := sarifSchema(t)
	files := map[string]string{}
	var uploaded string
	ran := 0
	for _, step := range wf.Jobs["gwdev"].Steps {
		if strings.HasPrefix(step.Uses, "github/codeql-action/upload-sarif@") {
			uploaded = step.With["sarif_file"]
		}
		if !strings.HasPrefix(step.Run, "gwdev ") {
			continue
		}
		cmd, _, _ := strings.Cut(step.Run, " || ")
		cmd, redirect, _ := strings.Cut(cmd, " > ")
		args := strings.Fields(strings.ReplaceAll(cmd, "deploy/gateway", "../../samples/cross-namespace"))[1:]
		out, errOut, code := runGwdev(t, "", args...)
		if code == exitUsage {
			t.Fatalf("%s: exit %d: %s", step.Run, code, errOut)
		}
		ran++
		if f := strings.TrimSpace(redirect); f != "" {
			files[f] = out
		}
		if strings.Contains(cmd, "--format github") && !strings.Contains(out, "::error file=") {
			t.Errorf("%s: no annotation:\n%s", step.Run, out)
		}
	}
	if ran < 2 || uploaded == "" || files[uploaded] == "" {
		t.Fatalf("ran %d gwdev steps; the upload names %q, written: %v", ran, uploaded, len(files))
	}
	checkSARIF(t, schema, "docs/ci.md's "+uploaded, files[uploaded])
}
