package guard

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// rule is one pattern of a fact re-derived outside its owner.
type rule struct {
	name string
	re   *regexp.Regexp
	// owners are the files (slash paths from the module root) allowed to
	// match, each with why.
	owners map[string]string
	// within, when set, limits the rule to files it matches (the rule's
	// pattern means the fact only there).
	within *regexp.Regexp
}

// rules are the patterns the test forbids outside their owners.
var rules = []rule{
	{
		name: "condition polarity list",
		re: regexp.MustCompile(`negativePolarity|negative\s*:?=\s*c\.Type|"(Conflicted|OverlappingTLSConfig|PartiallyInvalid|InsecureFrontendValidationMode)"\s*:\s*true|` +
			`Type\s*==\s*"(Conflicted|OverlappingTLSConfig|PartiallyInvalid|InsecureFrontendValidationMode)"\s*\|\||` +
			`case\s+"(Conflicted|OverlappingTLSConfig|PartiallyInvalid|InsecureFrontendValidationMode)",\s*"`),
		owners: map[string]string{
			"engine/polarity.go": "the one list: NegativePolarity, ConditionIsProblem, ConditionSeverity",
		},
	},
	{
		name: "route kind compared by name",
		re:   regexp.MustCompile(`(?i:kind)\)?\s*[!=]=\s*"[A-Za-z]*Route"|"[A-Za-z]*Route"\s*[!=]=|case\s+"[A-Za-z]*Route"|"(HTTP|GRPC|TLS|TCP|UDP)Route"\s*:\s*(true|false)`),
		owners: map[string]string{
			"engine/kinds.go":       "the registry",
			"engine/route_kinds.go": "the per-kind translation",
		},
	},
	{
		name: "policy targets listed",
		re:   regexp.MustCompile(`PolicyTargets\{|GroupKind\{\{?\s*(Group:\s*[^,{}]*,\s*)?Kind:\s*"`),
		owners: map[string]string{
			"engine/kinds.go":         "the registry: Kind.Policy of BackendTLSPolicy, XBackendTrafficPolicy, XTelemetryPolicy",
			"engine/gwin/policies.go": "gwin's policy kinds, which the registry answers from (engine.PolicyKindsProfile)",
		},
	},
	{
		name:   "policy target compared by name",
		within: regexp.MustCompile(`\bTargetRefs\b|"targetRefs"|spec\.targetRefs`),
		re:     regexp.MustCompile(`\b(Group|Kind|group|kind)\)?\s*[!=]=\s*"[A-Za-z]`),
		owners: map[string]string{
			"watch/cluster.go": "the kinds pull fetches from a cluster when a reference names them, not a policy's targets",
		},
	},
	{
		name: "message text parsed",
		re:   regexp.MustCompile(`strings\.(Contains|HasPrefix|HasSuffix|Cut|CutPrefix|CutSuffix|Index|Split|SplitN|Fields)\([^)]*\b(Message|message|msg|Reason)\b`),
		owners: map[string]string{
			"engine/gwin/settings.go": "gwinField reads the 'annotation <key>' of gwin's own messages, next to the code that writes them, until the gwin plug-in carries its problems typed",
			"emulator/backendtls.go":  "crypto/tls errors carry no type for a remote alert",
			"emulator/tlsconn.go":     "crypto/tls errors carry no type for a remote alert",
			"internal/routetest/check.go": "a routing test's reason: expectation is the user's assertion on the text the trace shows people; " +
				"no decision of gwdev is taken from it",
			"tui/request_replay.go":  "a gRPC client's status message",
			"watch/listener_dups.go": "the apiserver's validation wording, in the loader that reproduces it",
			"watch/metadata.go":      "the apiserver's validation wording, in the loader that reproduces it",
			"watch/policies.go":      "the apiserver's validation wording, in the loader that reproduces it",
		},
	},
	{
		name: "YAML renderer",
		re:   regexp.MustCompile(`\b\w*yaml\w*\.(Marshal|JSONToYAML|NewEncoder|Dump|NewDumper)\(|\btype\s+\w*[Ee]mitter\s+struct\b`),
		owners: map[string]string{
			"internal/report/yaml.go":     "the one renderer (report.YAML): sigs.k8s.io/yaml for what the fast emitter leaves out",
			"internal/report/yamlemit.go": "the fast emitter behind report.YAML, byte for byte sigs.k8s.io/yaml",
			"watch/cluster.go":            "pull writes the manifests it fetched as files the user edits (input, not output); watch is below internal/report",
			"watch/kustomize.go":          "writes the kustomization.yaml kustomize build reads (input, not output); watch is below internal/report",
			"internal/routetest/update.go": "gwdev test --update edits the user's test file in place, keeping its comments and layout (input, not output), " +
				"which rendering through report.YAML would lose",
		},
	},
	{
		name:   "condition badge rendered",
		within: regexp.MustCompile(`"[^"\n]*[✓✗]`),
		re:     regexp.MustCompile(`\.Status\s*[!=]=\s*(metav1\.)?Condition(True|False|Unknown)\b|\bStatus\s*[!=]=\s*"(True|False|Unknown)"|\bNegativePolarity\(`),
		owners: map[string]string{
			"internal/report/badges.go": "report.ConditionBadge: the badge of a condition from the engine's polarity rule (engine/polarity.go)",
		},
	},
	{
		name: "hint text table",
		re: regexp.MustCompile(`"(\w+/)?(NotAllowedByListeners|NoMatchingListenerHostname|NoMatchingParent|RefNotPermitted|BackendNotFound|InvalidKind|` +
			`InvalidCertificateRef|ListenersNotValid|HostnameConflict|ProtocolConflict|TargetNotFound|ShadowedRule|UnsupportedValue)"\s*:\s*(return\s+)?"|` +
			`\bNote[A-Z]\w*\s*:\s*"`),
		owners: map[string]string{
			"engine/hints.go": "the hints of every condition reason and note kind (ReasonHint, NoteHint, Finding.Hint, ConflictRule)",
		},
	},
	{
		name: "winning policy chosen",
		re:   regexp.MustCompile(`\bPolicyReasonConflicted\b|older or sorts first|(olderFirst|compareOlder)\(\w*[pP]ol\w*\[`),
		owners: map[string]string{
			"engine/policyconflict.go": "policyClaims: GEP-713 conflict resolution (oldest, then namespace/name) and its Conflicted wording, for every policy kind",
		},
	},
	{
		// The ingress-nginx front end is a package of its own: what its
		// annotations, controller and class names are is said there once.
		name: "ingress-nginx name written",
		re:   regexp.MustCompile(`"(nginx\.ingress\.kubernetes\.io/|k8s\.io/ingress-nginx"|kubernetes\.io/ingress\.class"|ingressclass\.kubernetes\.io/is-default-class")`),
		owners: map[string]string{
			"engine/ingressnginx/annotations.go": "AnnotationPrefix",
			"engine/ingressnginx/classes.go":     "Controller, ClassAnnotation, DefaultClassLabel",
		},
	},
	{
		name: "trace rule name split",
		re:   regexp.MustCompile(`strings\.(Split|SplitN|Cut|Index|LastIndex|HasPrefix|HasSuffix|Fields)\([a-z]+\.Rule\b`),
	},
	{
		name: "trace text matched",
		re:   regexp.MustCompile(`"(pre-routing )?ExternalAuth: |\.End\s*[!=]=\s*"[^"]|strings\.\w+\([^)]*\.Filters\b|slices\.(ContainsFunc|IndexFunc)\(\w+\.Filters,\s*func\(\w+ string\)`),
		owners: map[string]string{
			"emulator/extauth.go":         "writes the ExternalAuth filter lines (Trace.AuthAsked carries the names)",
			"emulator/extauth/extauth.go": "words the HTTP check's filter lines (Decision.Filter; emulator/extauth.go writes them)",
			"emulator/extauth/grpc.go":    "words the gRPC check's filter lines (Decision.Filter; emulator/extauth.go writes them)",
			"emulator/prerouting.go":      "writes the pre-routing ExternalAuth filter line (Trace.AuthAsked carries the names)",
		},
	},
}

// dirs are the packages the test reads (non-test Go files, recursively).
var dirs = []string{"engine", "emulator", "tui", "cmd", "watch", "internal"}

// root is the module root (GUARD_ROOT: another tree, to count a base).
func root(t *testing.T) string {
	if r := os.Getenv("GUARD_ROOT"); r != "" {
		return r
	}
	r, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestFactsStayWithOwners fails on any match of a rule outside the rule's
// owners.
func TestFactsStayWithOwners(t *testing.T) {
	r := root(t)
	counts := map[string]int{}
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(r, d), func(path string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(r, path)
			rel = filepath.ToSlash(rel)
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			applies := make([]bool, len(rules))
			for j, ru := range rules {
				applies[j] = ru.within == nil || ru.within.Match(b)
			}
			for i, line := range strings.Split(string(b), "\n") {
				if trimmed := strings.TrimSpace(line); strings.HasPrefix(trimmed, "//") {
					continue
				}
				for j, ru := range rules {
					if !applies[j] || !ru.re.MatchString(line) {
						continue
					}
					counts[ru.name]++
					if _, ok := ru.owners[rel]; !ok {
						t.Errorf("%s:%d: %s outside its owner (ask the owner, or list the file in internal/guard with why): %s",
							rel, i+1, ru.name, strings.TrimSpace(line))
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var names []string
	for _, ru := range rules {
		names = append(names, fmt.Sprintf("%s %d", ru.name, counts[ru.name]))
	}
	sort.Strings(names)
	t.Logf("matches (owners included): %s", strings.Join(names, ", "))
}

// TestRulesMatch keeps the patterns honest: each finds the code it is
// meant to forbid.
func TestRulesMatch(t *testing.T) {
	bad := map[string]string{
		"condition polarity list":        `var negativePolarity = map[string]bool{"Conflicted": true}`,
		"route kind compared by name":    `if r.kind == "HTTPRoute" || r.kind == "GRPCRoute" {`,
		"message text parsed":            `if strings.Contains(f.Message, "not found") {`,
		"trace rule name split":          `parts := strings.Split(t.Rule, "/")`,
		"trace text matched":             `slices.ContainsFunc(t.Filters, func(f string) bool { return strings.HasPrefix(f, "x") })`,
		"policy targets listed":          `Targets: []metav1.GroupKind{{Group: "", Kind: "Service"}},`,
		"policy target compared by name": `if tr.Group != "" || tr.Kind != "Service" {`,
		"YAML renderer":                  `b, err := yaml.Marshal(engine.RedactSecret(o.obj))`,
		"condition badge rendered":       `if c.Status != metav1.ConditionTrue { mark = "✗" }`,
		"hint text table":                `"NotAllowedByListeners": "the listener's allowedRoutes excludes this route",`,
		"winning policy chosen":          `sort.SliceStable(pols, func(i, j int) bool { return olderFirst(pols[i].obj, pols[j].obj) })`,
		"ingress-nginx name written":     `if v := ann["nginx.ingress.kubernetes.io/rewrite-target"]; v != "" {`,
	}
	for _, ru := range rules {
		if !ru.re.MatchString(bad[ru.name]) {
			t.Errorf("rule %q does not match %q", ru.name, bad[ru.name])
		}
	}
	for _, ok := range []string{`if engine.RoutesGRPC(key.Kind) {`, `if t.End == emulator.EndRefused {`, `return explainNote(f.Kind)`, `if t.End == "" {`,
		`if !PolicyOf(ExperimentalGroup, "XTelemetryPolicy").Allows(string(tr.Group), string(tr.Kind)) {`, `if kind == "" {`} {
		for _, ru := range rules {
			if ru.re.MatchString(ok) {
				t.Errorf("rule %q matches allowed code %q", ru.name, ok)
			}
		}
	}
}

// TestReportImportsNoFrontEnd keeps internal/report below the front ends:
// CI output (check's SARIF, GitHub annotations, summary) must not depend
// on the dashboard, and nothing imports cmd.
func TestReportImportsNoFrontEnd(t *testing.T) {
	dir := filepath.Join(root(t), "internal", "report")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no internal/report sources in %s: %v", dir, err)
	}
	forbidden := regexp.MustCompile(`"github\.com/gwdev/gwdev/(tui|cmd|emulator|internal/app)(/[^"]*)?"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range forbidden.FindAllString(string(b), -1) {
			t.Errorf("%s imports %s: internal/report may import engine and watch only", filepath.Base(f), m)
		}
	}
}
