package report

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gwdev/gwdev/internal/routetest"
)

// RoutingTestFormats are the formats `gwdev test --format` takes.
var RoutingTestFormats = []string{"human", "junit", "json", "github", "sarif"}

// WriteRoutingTests writes a test run in format (one of
// RoutingTestFormats).
func WriteRoutingTests(w io.Writer, run *routetest.Run, format, version string) error {
	switch format {
	case "human", "":
		writeTestsHuman(w, run)
		return nil
	case "junit":
		return writeTestsJUnit(w, run)
	case "json":
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(run)
	case "github":
		writeTestsGitHub(w, run)
		return nil
	case "sarif":
		return writeTestsSARIF(w, run, version)
	}
	return fmt.Errorf("unknown format %q (want %s)", format, strings.Join(RoutingTestFormats, ", "))
}

// failureText is a failed case's expectations against what happened,
// side by side, then why it could not be sent, each line with the test
// file's line.
func failureText(file string, c *routetest.CaseResult) string {
	var b strings.Builder
	if c.Error != "" {
		fmt.Fprintf(&b, "%s:%d: %s\n", file, c.Line, c.Error)
	}
	if len(c.Mismatches) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "where\tfield\texpected\tactual")
		for _, m := range c.Mismatches {
			line := m.Line
			if line == 0 {
				line = c.Line
			}
			fmt.Fprintf(tw, "%s:%d\t%s\t%s\t%s\n", file, line, m.Field, oneLine(m.Want), oneLine(m.Got))
		}
		_ = tw.Flush()
	}
	return b.String()
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", `\n`) }

func writeTestsHuman(w io.Writer, run *routetest.Run) {
	for _, f := range run.Files {
		for i := range f.Cases {
			c := &f.Cases[i]
			if c.Passed() {
				fmt.Fprintf(w, "ok    %s:%d  %s\n", f.Path, c.Line, c.Name)
				continue
			}
			fmt.Fprintf(w, "FAIL  %s:%d  %s\n", f.Path, c.Line, c.Name)
			for _, l := range strings.Split(strings.TrimRight(failureText(f.Path, c), "\n"), "\n") {
				fmt.Fprintf(w, "      %s\n", l)
			}
			if c.Explain != "" {
				fmt.Fprintln(w, "      the request, as gwdev explain shows it:")
				for _, l := range strings.Split(strings.TrimRight(c.Explain, "\n"), "\n") {
					fmt.Fprintf(w, "        %s\n", l)
				}
			}
		}
	}
	n, failed := run.Counts()
	if failed == 0 {
		fmt.Fprintf(w, "PASS  %s in %s\n", Plural(n, "case"), Plural(len(run.Files), "file"))
		return
	}
	fmt.Fprintf(w, "FAIL  %d of %d cases failed\n", failed, n)
}

// junitSuites is the JUnit XML most CI systems read (the Jenkins/Ant
// schema): one testsuite per file, one testcase per case.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	File      string        `xml:"file,attr"`
	Line      int           `xml:"line,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func seconds(ns int64) string { return strconv.FormatFloat(float64(ns)/1e9, 'f', 3, 64) }

func writeTestsJUnit(w io.Writer, run *routetest.Run) error {
	all := junitSuites{Name: "gwdev test"}
	var total int64
	for _, f := range run.Files {
		s := junitSuite{Name: f.Path}
		var st int64
		for i := range f.Cases {
			c := &f.Cases[i]
			jc := junitCase{Name: c.Name, Classname: f.Path, File: f.Path, Line: c.Line, Time: seconds(int64(c.Duration))}
			st += int64(c.Duration)
			if !c.Passed() {
				msg := c.Error
				if msg == "" {
					msg = fmt.Sprintf("%d expectation(s) not met", len(c.Mismatches))
				}
				text := failureText(f.Path, c)
				if c.Explain != "" {
					text += "\nthe request, as gwdev explain shows it:\n" + c.Explain
				}
				jc.Failure = &junitFailure{Message: msg, Type: "gwdev.expectation", Text: text}
				s.Failures++
			}
			s.Tests++
			s.Cases = append(s.Cases, jc)
		}
		s.Time = seconds(st)
		total += st
		all.Tests += s.Tests
		all.Failures += s.Failures
		all.Suites = append(all.Suites, s)
	}
	all.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	e := xml.NewEncoder(w)
	e.Indent("", "  ")
	if err := e.Encode(all); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// writeTestsGitHub writes a GitHub Actions error annotation on the line of
// every expectation not met (or of the case), and a notice per file.
func writeTestsGitHub(w io.Writer, run *routetest.Run) {
	for _, f := range run.Files {
		for i := range f.Cases {
			c := &f.Cases[i]
			if c.Error != "" {
				fmt.Fprintf(w, "::error file=%s,line=%d,title=%s::%s\n", escapeProperty(f.Path), c.Line,
					escapeProperty("gwdev test: "+c.Name), escapeData(c.Error))
			}
			for _, m := range c.Mismatches {
				line := m.Line
				if line == 0 {
					line = c.Line
				}
				fmt.Fprintf(w, "::error file=%s,line=%d,title=%s::%s\n", escapeProperty(f.Path), line,
					escapeProperty("gwdev test: "+c.Name), escapeData(fmt.Sprintf("%s: expected %s, got %s", m.Field, m.Want, m.Got)))
			}
		}
	}
	n, failed := run.Counts()
	fmt.Fprintf(w, "%d of %d routing test cases failed\n", failed, n)
}

// writeTestsSARIF writes every expectation not met (and every case that
// could not be sent) as a SARIF 2.1.0 result at its line, rule
// gwdev-test/<field>.
func writeTestsSARIF(w io.Writer, run *routetest.Run, version string) error {
	driver := SARIFDriver{Name: "gwdev", InformationURI: "https://github.com/gwdev/gwdev/blob/main/docs/commands/test.md", Version: version, Rules: []SARIFRule{}}
	ruleAt := map[string]int{}
	rule := func(field string) int {
		id := "gwdev-test/" + strings.SplitN(field, ".", 2)[0]
		if i, ok := ruleAt[id]; ok {
			return i
		}
		ruleAt[id] = len(driver.Rules)
		text := "A routing test case's " + strings.TrimPrefix(id, "gwdev-test/") + " expectation is not met."
		if id == "gwdev-test/case" {
			text = "A routing test case could not be sent or checked."
		}
		driver.Rules = append(driver.Rules, SARIFRule{ID: id, Name: strings.TrimPrefix(id, "gwdev-test/"),
			ShortDescription: SARIFText{Text: text}, FullDescription: SARIFText{Text: text},
			Help:                 SARIFText{Text: "Run gwdev test to see the expected and actual values and the request's trace (docs/commands/test.md)."},
			DefaultConfiguration: SARIFRuleConfig{Level: "error"}})
		return ruleAt[id]
	}
	results := []SARIFResult{}
	add := func(file string, line int, field, msg string) {
		i := rule(field)
		results = append(results, SARIFResult{RuleID: driver.Rules[i].ID, RuleIndex: i, Level: "error", Message: SARIFText{Text: msg},
			Locations: []SARIFLocation{{PhysicalLocation: &SARIFPhysical{ArtifactLocation: SARIFArtifact{URI: sarifURI(file)}, Region: &SARIFRegion{StartLine: max(line, 1)}}}}})
	}
	for _, f := range run.Files {
		for i := range f.Cases {
			c := &f.Cases[i]
			if c.Error != "" {
				add(f.Path, c.Line, "case", c.Name+": "+c.Error)
			}
			for _, m := range c.Mismatches {
				line := m.Line
				if line == 0 {
					line = c.Line
				}
				add(f.Path, line, m.Field, fmt.Sprintf("%s: %s: expected %s, got %s", c.Name, m.Field, m.Want, m.Got))
			}
		}
	}
	log := SARIFLog{Schema: "https://json.schemastore.org/sarif-2.1.0.json", Version: "2.1.0",
		Runs: []SARIFRun{{Tool: SARIFTool{Driver: driver}, Invocations: []SARIFInvocation{{ExecutionSuccessful: true}}, Results: results}}}
	e := json.NewEncoder(w)
	e.SetIndent("", "  ")
	return e.Encode(log)
}
