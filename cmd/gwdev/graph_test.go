package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sampleDirs lists the bundled samples.
func sampleDirs(t *testing.T) []string {
	t.Helper()
	dirs, _ := filepath.Glob("../../samples/*")
	var out []string
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	if len(out) < 5 {
		t.Fatalf("found %d samples", len(out))
	}
	return out
}

var (
	dotNode = regexp.MustCompile(`^  ("(?:[^"\\]|\\.)*") \[label=("(?:[^"\\]|\\.)*"), fillcolor="#[0-9a-f]{6}"(?:, shape=note, style=filled)?(, color="#[0-9a-f]{6}", penwidth=2|, color="#[0-9a-f]{6}")?\];$`)
	dotEdge = regexp.MustCompile(`^  ("(?:[^"\\]|\\.)*") -> ("(?:[^"\\]|\\.)*")( \[(label="(?:[^"\\]|\\.)*")?(, )?(color="#[0-9a-f]{6}", fontcolor="#[0-9a-f]{6}", style=dashed|fontcolor="#[0-9a-f]{6}"|color="#[0-9a-f]{6}", style=dashed)?\])?;$`)
)

// checkDOT parses gwdev's DOT output line by line: the fixed header, node
// statements, edge statements between declared nodes, the closing brace.
// It returns the node count and the red (problem) nodes' IDs.
func checkDOT(t *testing.T, name, out string) (nodes int, red []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 5 || lines[0] != "digraph gwdev {" || lines[len(lines)-1] != "}" {
		t.Fatalf("%s: not a gwdev digraph:\n%s", name, out)
	}
	declared := map[string]bool{}
	for _, l := range lines[4 : len(lines)-1] {
		if m := dotNode.FindStringSubmatch(l); m != nil {
			if declared[m[1]] {
				t.Errorf("%s: node %s declared twice", name, m[1])
			}
			declared[m[1]] = true
			if strings.Contains(m[3], "penwidth") { // a policy's own colour is not red
				red = append(red, m[1])
			}
			continue
		}
		if m := dotEdge.FindStringSubmatch(l); m != nil {
			if !declared[m[1]] || !declared[m[2]] {
				t.Errorf("%s: edge between undeclared nodes: %s", name, l)
			}
			continue
		}
		t.Errorf("%s: line is neither a node nor an edge statement: %q", name, l)
	}
	return len(declared), red
}

var (
	mermaidNode  = regexp.MustCompile(`^  (n[0-9]+)(?:\["([^"]*)"\]|\{\{"([^"]*)"\}\})$`)
	mermaidEdge  = regexp.MustCompile(`^  (n[0-9]+) (-->|-\.->)(\|"[^"]*"\|)? (n[0-9]+)$`)
	mermaidClass = regexp.MustCompile(`^  classDef ([a-z]+) fill:#[0-9a-f]{6},stroke:#[0-9a-f]{6}$`)
	mermaidUse   = regexp.MustCompile(`^  class (n[0-9]+(?:,n[0-9]+)*) ([a-z]+)$`)
	mermaidLinks = regexp.MustCompile(`^  linkStyle ([0-9]+(?:,[0-9]+)*) (?:(?:stroke:#[0-9a-f]{6},)?color:#[0-9a-f]{6}|stroke:#[0-9a-f]{6})$`)
)

// checkMermaid parses gwdev's Mermaid output: node, link, classDef, class
// and linkStyle statements, with every ID declared before use, every class
// defined, and link indexes in range.
func checkMermaid(t *testing.T, name, out string) (nodes int, bad []string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if lines[0] != "flowchart LR" {
		t.Fatalf("%s: not a flowchart:\n%s", name, out)
	}
	declared, classes := map[string]bool{}, map[string]bool{}
	links := 0
	for _, l := range lines[1:] {
		switch {
		case mermaidNode.MatchString(l):
			declared[mermaidNode.FindStringSubmatch(l)[1]] = true
		case mermaidEdge.MatchString(l):
			m := mermaidEdge.FindStringSubmatch(l)
			if !declared[m[1]] || !declared[m[4]] {
				t.Errorf("%s: link to an undeclared node: %s", name, l)
			}
			links++
		case mermaidClass.MatchString(l):
			classes[mermaidClass.FindStringSubmatch(l)[1]] = true
		case mermaidUse.MatchString(l):
			m := mermaidUse.FindStringSubmatch(l)
			if !classes[m[2]] {
				t.Errorf("%s: class %s used before classDef", name, m[2])
			}
			for _, id := range strings.Split(m[1], ",") {
				if !declared[id] {
					t.Errorf("%s: class on undeclared node %s", name, id)
				}
				if m[2] == "bad" {
					bad = append(bad, id)
				}
			}
		case mermaidLinks.MatchString(l):
			for _, s := range strings.Split(mermaidLinks.FindStringSubmatch(l)[1], ",") {
				if n, _ := strconv.Atoi(s); n >= links {
					t.Errorf("%s: linkStyle %d but only %d links", name, n, links)
				}
			}
		default:
			t.Errorf("%s: not a statement gwdev writes: %q", name, l)
		}
	}
	return len(declared), bad
}

// TestGraphStructure renders every sample in both formats and parses the
// output; the shadowed and conflicts samples must show their problems red.
func TestGraphStructure(t *testing.T) {
	for _, dir := range sampleDirs(t) {
		name := filepath.Base(dir)
		dot, errOut, code := runGwdev(t, "", "graph", "--format", "dot", dir)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errOut)
		}
		mm, _, code := runGwdev(t, "", "graph", dir)
		if code != 0 {
			t.Fatalf("%s: mermaid: exit %d", name, code)
		}
		dn, red := checkDOT(t, name, dot)
		mn, bad := checkMermaid(t, name, mm)
		if dn != mn || dn < 4 || len(red) != len(bad) {
			t.Errorf("%s: DOT has %d nodes (%d red), Mermaid %d (%d bad)", name, dn, len(red), mn, len(bad))
		}
		switch name {
		case "shadowed":
			if len(red) != 1 || red[0] != `"httproute/default/search/rule/0"` {
				t.Errorf("shadowed: red nodes %v, want the shadowed rule only", red)
			}
		case "conflicts":
			if !strings.Contains(dot, `"httproute/default/docs" [label="HTTPRoute default/docs\n✗ Accepted=False (NoMatchingListenerHostname)"`) ||
				!strings.Contains(dot, `-> "httproute/default/docs" [label="✗ Accepted=False (NoMatchingListenerHostname)", color="#b91c1c"`) {
				t.Errorf("conflicts: the refused route is not red with its reason:\n%s", dot)
			}
			if len(red) < 5 {
				t.Errorf("conflicts: %d red nodes, want the 4 conflicted listeners and the refused route", len(red))
			}
		case "basic":
			if len(red) != 0 {
				t.Errorf("basic: red nodes %v", red)
			}
		}
	}
	if _, _, code := runGwdev(t, "", "graph", "--format", "jpeg", "../../samples/basic"); code != exitUsage {
		t.Errorf("--format jpeg: exit %d, want %d", code, exitUsage)
	}
}

// TestGraphSVGWithoutGraphviz: with nothing on PATH (no Graphviz's dot),
// --format svg and --format png exit 2 before loading anything, write
// nothing, and say why and what to do instead: install Graphviz, or use
// --format dot or mermaid, or the web view. gwdev carries no Graphviz of
// its own (the web view lays the graph out in the browser).
func TestGraphSVGWithoutGraphviz(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, format := range []string{"svg", "png"} {
		out, errOut, code := runGwdev(t, "", "graph", "--format", format, "../../samples/conflicts")
		for _, want := range []string{
			"--format " + format + " needs Graphviz's dot, which is not on PATH",
			"install Graphviz (apt-get install graphviz, dnf install graphviz, brew install graphviz, choco install graphviz)",
			"or use --format dot", "or --format mermaid", "or open the web view (gwdev up prints its URL)",
		} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", format, want, errOut)
			}
		}
		if code != exitUsage || out != "" {
			t.Errorf("%s: exit %d, %d bytes on stdout", format, code, len(out))
		}
	}
}

// TestGraphSVGWithGraphviz: with Graphviz's dot on PATH (.ci/run installs
// it), --format svg draws a node per DOT node, each titled by its graph
// ID, with the conflicts sample's reasons, and --format png is a PNG.
func TestGraphSVGWithGraphviz(t *testing.T) {
	if _, err := exec.LookPath("dot"); err != nil {
		t.Skip("Graphviz's dot is not installed (apt-get install -y graphviz)")
	}
	dot, _, _ := runGwdev(t, "", "graph", "--format", "dot", "../../samples/conflicts")
	nodes, _ := checkDOT(t, "conflicts", dot)
	out, errOut, code := runGwdev(t, "", "graph", "--format", "svg", "../../samples/conflicts")
	if code != 0 || !strings.Contains(out, "<svg") || !strings.Contains(out, "NoMatchingListenerHostname") {
		t.Fatalf("svg: exit %d: %s\n%.300s", code, errOut, out)
	}
	if n := strings.Count(out, `class="node"`); n != nodes {
		t.Errorf("svg: %d nodes, the DOT has %d", n, nodes)
	}
	if !strings.Contains(out, "<title>gateway/default/") {
		t.Errorf("svg: no node titled with its graph ID:\n%.600s", out)
	}
	png, errOut, code := runGwdev(t, "", "graph", "--format", "png", "../../samples/basic")
	if code != 0 || !strings.HasPrefix(png, "\x89PNG\r\n\x1a\n") || len(png) < 1000 {
		t.Errorf("png: exit %d, %d bytes: %s", code, len(png), errOut)
	}
}

// TestGraphEdgeStyles: a route its parent refused hangs on a dashed red
// edge; a route the parent accepted that has a problem (a backend that is
// not found) keeps a solid edge, its problem in red on the label.
func TestGraphEdgeStyles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "gw.yaml"), `apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: gw}
spec:
  gatewayClassName: gwdev
  listeners: [{name: http, protocol: HTTP, port: 80, hostname: a.example}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: accepted}
spec:
  parentRefs: [{name: gw}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /ok}}]
    backendRefs: [{name: svc, port: 80}]
  - matches: [{path: {type: PathPrefix, value: /missing}}]
    backendRefs: [{name: missing, port: 80}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: refused}
spec:
  parentRefs: [{name: gw}]
  hostnames: [b.example]
  rules: [{backendRefs: [{name: svc, port: 80}]}]
---
apiVersion: v1
kind: Service
metadata: {name: svc}
spec: {ports: [{port: 80}]}
`)
	dot, _, _ := runGwdev(t, "", "graph", "--format", "dot", dir)
	checkDOT(t, "edges", dot)
	var accepted, refused string
	for _, l := range strings.Split(dot, "\n") {
		switch {
		case strings.Contains(l, `-> "httproute/default/accepted"`):
			accepted = l
		case strings.Contains(l, `-> "httproute/default/refused"`):
			refused = l
		}
	}
	if !strings.Contains(accepted, "ResolvedRefs=False (BackendNotFound)") || strings.Contains(accepted, "dashed") || !strings.Contains(accepted, `fontcolor="#b91c1c"`) {
		t.Errorf("accepted route's edge: %s", accepted)
	}
	if !strings.Contains(refused, "Accepted=False (NoMatchingListenerHostname)") || !strings.Contains(refused, "style=dashed") {
		t.Errorf("refused route's edge: %s", refused)
	}
	mm, _, _ := runGwdev(t, "", "graph", dir)
	checkMermaid(t, "edges", mm)
	if !strings.Contains(mm, `-.->|"✗ Accepted=False (NoMatchingListenerHostname)"|`) || !strings.Contains(mm, `-->|"✗ ResolvedRefs=False (BackendNotFound)"|`) {
		t.Errorf("mermaid edges:\n%s", mm)
	}
}

// TestGraphDOTParsesWithGraphviz feeds every sample's DOT to Graphviz's dot.
func TestGraphDOTParsesWithGraphviz(t *testing.T) {
	dotBin, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("Graphviz's dot is not installed (apt-get install -y graphviz); TestGraphStructure still checks the DOT syntax gwdev writes")
	}
	for _, dir := range sampleDirs(t) {
		out, _, _ := runGwdev(t, "", "graph", "--format", "dot", dir)
		cmd := exec.Command(dotBin, "-Tsvg")
		cmd.Stdin = strings.NewReader(out)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("%s: dot: %v: %s", filepath.Base(dir), err, stderr.String())
		}
		if !bytes.Contains(stdout.Bytes(), []byte("<svg")) {
			t.Errorf("%s: dot wrote no SVG", filepath.Base(dir))
		}
	}
}

// TestGraphMermaidParsesWithMermaid feeds every sample's Mermaid output to
// Mermaid's own parser (testdata/mermaid-parse.mjs) when
// GWDEV_MERMAID_NODE_MODULES names a node_modules folder with the mermaid
// and jsdom packages; a broken flowchart must fail, so the check can fail.
func TestGraphMermaidParsesWithMermaid(t *testing.T) {
	modules := os.Getenv("GWDEV_MERMAID_NODE_MODULES")
	node, err := exec.LookPath("node")
	if modules == "" || err != nil {
		t.Skip("set GWDEV_MERMAID_NODE_MODULES to a node_modules folder with mermaid and jsdom (npm install mermaid jsdom) and have node on PATH to parse with Mermaid itself; TestGraphStructure still checks the syntax gwdev writes")
	}
	tmp := t.TempDir()
	var files []string
	for _, dir := range sampleDirs(t) {
		out, _, _ := runGwdev(t, "", "graph", dir)
		f := filepath.Join(tmp, filepath.Base(dir)+".mmd")
		if err := os.WriteFile(f, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	parse := func(files ...string) (string, error) {
		cmd := exec.Command(node, append([]string{"testdata/mermaid-parse.mjs"}, files...)...)
		cmd.Env = append(os.Environ(), "GWDEV_MERMAID_NODE_MODULES="+modules)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := parse(files...); err != nil {
		t.Errorf("mermaid.parse: %v\n%s", err, out)
	}
	broken := filepath.Join(tmp, "broken.mmd")
	_ = os.WriteFile(broken, []byte("flowchart LR\n  n0[\"a\"]\n  n0 -->\n"), 0o644)
	if out, err := parse(broken); err == nil {
		t.Errorf("mermaid.parse accepted a broken flowchart:\n%s", out)
	}
}
