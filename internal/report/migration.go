package report

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/engine/ingressnginx"
	"github.com/gwdev/gwdev/internal/dash"
	"github.com/gwdev/gwdev/watch"
)

// This file is `gwdev migrate`'s output: the comparison of --compare
// (computed by internal/app's CompareMigration, read by the dashboard's
// Migration view too) and what the conversion did not carry over.

// CompareRequest is one request --compare sends to both sides.
type CompareRequest struct {
	// Class is the IngressClass serving the Ingress the request was made
	// from: it goes to that class and to the Gateway converted from it.
	Class   string            `json:"class"`
	HTTPS   bool              `json:"https"`
	Host    string            `json:"host"`
	Path    string            `json:"path"`
	Headers map[string]string `json:"headers,omitempty"`
	// From is the Ingress path the request was made from; Ingress the
	// Ingress (not in JSON: the differences list is as it was).
	From    engine.Source    `json:"-"`
	Ingress engine.ObjectKey `json:"-"`
}

// CompareAnswer is what one side did with a request.
type CompareAnswer struct {
	Status   int    `json:"status"`
	Location string `json:"location,omitempty"`
	// Services are the backends the matched rule splits requests between
	// ("ns/name 90%"), or the one that answered.
	Services string `json:"services,omitempty"`
	// Path is the path the backend saw.
	Path string `json:"path,omitempty"`
	Host string `json:"backendHost,omitempty"`
	// Added are the request headers the backend saw that the client did
	// not send ("Name: value; …", sorted).
	Added  string `json:"headersAdded,omitempty"`
	Rule   string `json:"rule,omitempty"`
	Source string `json:"source,omitempty"`
	// Error says why no answer came (Status is then -1).
	Error string `json:"error,omitempty"`
}

// CompareDifference is a request the two sides answered differently.
type CompareDifference struct {
	Request CompareRequest `json:"request"`
	Ingress CompareAnswer  `json:"ingress"`
	Gateway CompareAnswer  `json:"gateway"`
	// Fields names what differs.
	Fields []string `json:"fields"`
	// Group is the same for differences with the same Fields and the same
	// values of them on both sides ("status: 401 | 200; …"): --compare's
	// text output prints each group once, with its requests.
	Group string `json:"group"`
}

// NewCompareDifference is r's difference between the ingress-nginx answer
// a and the Gateway API answer b, with its Fields and Group; ok is false
// when the answers agree.
func NewCompareDifference(r CompareRequest, a, b CompareAnswer) (d CompareDifference, ok bool) {
	fields := a.differs(b)
	if len(fields) == 0 {
		return d, false
	}
	return CompareDifference{Request: r, Ingress: a, Gateway: b, Fields: fields, Group: differenceGroup(fields, a, b)}, true
}

// differenceGroup is the Group of a difference in fields between the
// ingress-nginx answer a and the Gateway API answer b.
func differenceGroup(fields []string, a, b CompareAnswer) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f + ": " + strconv.Quote(a.Field(f)) + " | " + strconv.Quote(b.Field(f))
	}
	return strings.Join(parts, "; ")
}

// DifferenceGroup is the differences of a comparison that share a Group,
// in the order their first one was found.
type DifferenceGroup struct {
	Group       string
	Differences []CompareDifference
}

// GroupDifferences groups ds by Group, in the order each group first
// appears, each group's differences in their order.
func GroupDifferences(ds []CompareDifference) []DifferenceGroup {
	var out []DifferenceGroup
	at := map[string]int{}
	for _, d := range ds {
		i, ok := at[d.Group]
		if !ok {
			i = len(out)
			at[d.Group] = i
			out = append(out, DifferenceGroup{Group: d.Group})
		}
		out[i].Differences = append(out[i].Differences, d)
	}
	return out
}

// MigrationComparison is what --compare prints and the dashboard's
// Migration view lists.
type MigrationComparison struct {
	// Requests is how many requests were sent to both sides.
	Requests    int
	Differences []CompareDifference
	// Dropped is what the conversion did not carry over.
	Dropped []ingressnginx.DroppedFeature
	// Kept are the converted objects the folder holds itself: its own
	// versions (edited or not) are what the Gateway side serves.
	Kept []engine.ObjectKey
	// Converted is the load of the generated manifests, judged against
	// the project's CRDs (problems: objects refused or fields pruned).
	Converted *watch.LoadResult
	// LeftOut counts generated requests not sent: beyond Limit, or when
	// the comparison was stopped.
	LeftOut int
	// Limit is how many requests are sent at most (app.MaxCompareRequests).
	Limit int
}

// Failed reports whether the comparison fails --compare: a difference, a
// dropped feature or a converted manifest the CRDs refuse.
func (c *MigrationComparison) Failed() bool {
	return len(c.Differences) > 0 || len(c.Dropped) > 0 || len(c.Converted.Problems) > 0
}

// RequestLine is the request in words: "GET https://host/path [H: v]".
func (d CompareDifference) RequestLine() string {
	r := d.Request
	scheme := "http"
	if r.HTTPS {
		scheme = "https"
	}
	var hdr []string
	for _, k := range slices.Sorted(mapsKeys(r.Headers)) {
		hdr = append(hdr, k+": "+r.Headers[k])
	}
	s := fmt.Sprintf("GET %s://%s%s", scheme, r.Host, r.Path)
	if len(hdr) > 0 {
		s += fmt.Sprintf(" [%s]", strings.Join(hdr, "; "))
	}
	return s
}

func mapsKeys(m map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Field is one compared field of an answer, by name (compareFields).
func (a CompareAnswer) Field(name string) string {
	switch name {
	case "status":
		return strconv.Itoa(a.Status)
	case "location":
		return a.Location
	case "backend":
		return a.Services
	case "path":
		return a.Path
	case "host":
		return a.Host
	case "headers":
		return a.Added
	case "error":
		return a.Error
	}
	return ""
}

// compareFields are the fields of an answer compared, in output order.
var compareFields = []string{"status", "location", "backend", "path", "host", "headers", "error"}

// differs lists the fields whose values differ.
func (a CompareAnswer) differs(b CompareAnswer) []string {
	var out []string
	for _, f := range compareFields {
		if a.Field(f) != b.Field(f) {
			out = append(out, f)
		}
	}
	return out
}

// MigrationFormats are the formats WriteMigrationComparison writes
// (migrate --format): text (the default), json and github.
var MigrationFormats = []string{"text", "github", "json"}

// WriteMigrationComparison writes c in format (one of MigrationFormats;
// "" is text); crdsName names the CRDs the converted manifests were
// judged against.
func WriteMigrationComparison(out io.Writer, c *MigrationComparison, format, crdsName string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"requests": c.Requests, "differences": nonNil(c.Differences), "dropped": nonNil(c.Dropped),
			"kept": nonNil(c.Kept), "convertedProblems": nonNil(c.Converted.Problems), "leftOut": c.LeftOut})
	case "github":
		for _, d := range c.Differences {
			fmt.Fprintf(out, "::error file=%s,line=%d::%s\n", d.Request.From.File, d.Request.From.Line, escapeData(differenceText(d)))
		}
		for _, p := range c.Converted.Problems {
			fmt.Fprintf(out, "::error file=%s,line=%d::%s\n", p.File, p.Line, escapeData("the converted manifests: "+p.Message))
		}
		for _, d := range UniqueDropped(c.Dropped) {
			msg := d.Ingress.String() + ": not carried over: " + d.What + ": " + d.Why
			fmt.Fprintf(out, "::warning file=%s,line=%d::%s\n", d.Source.File, d.Source.Line, escapeData(msg))
		}
	default:
		fmt.Fprintln(out, compareSummary(c))
		for _, g := range GroupDifferences(c.Differences) {
			fmt.Fprintln(out, groupText(g))
		}
		if len(c.Converted.Problems) > 0 {
			fmt.Fprintln(out)
			WriteConvertedProblems(out, crdsName, c.Converted)
		}
		if len(c.Dropped) > 0 {
			fmt.Fprintln(out, "\nNot carried over:")
			WriteDropped(out, c.Dropped)
			WriteSecurityDropped(out, c.Dropped)
		}
	}
	return nil
}

// compareSummary is the comparison's first line.
func compareSummary(c *MigrationComparison) string {
	s := fmt.Sprintf("Sent %d requests generated from the Ingress rules to ingress-nginx (emulated) and to the converted Gateway API routes: %d differ.",
		c.Requests, len(c.Differences))
	if len(c.Kept) > 0 {
		s += fmt.Sprintf(" The folder's own version of %s was used.", Plural(len(c.Kept), "converted object"))
	}
	if c.LeftOut > 0 {
		s += fmt.Sprintf(" %d more were not sent (at most %d).", c.LeftOut, c.Limit)
	}
	return s
}

// differenceText renders a difference for people.
func differenceText(d CompareDifference) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (from %s)\n", d.RequestLine(), d.Request.From)
	for _, f := range d.Fields {
		fmt.Fprintf(&b, "  %-9s ingress-nginx %-30s gateway-api %s\n", f+":", dash.Quoted(d.Ingress.Field(f)), dash.Quoted(d.Gateway.Field(f)))
	}
	fmt.Fprintf(&b, "  rule:     ingress-nginx %s (%s)\n            gateway-api   %s (%s)", dash.Or(d.Ingress.Rule), dash.Or(d.Ingress.Source), dash.Or(d.Gateway.Rule), dash.Or(d.Gateway.Source))
	return b.String()
}

// groupText renders a group of differences for people: a difference alone
// as differenceText; several as one block with their count, the fields
// that differ (the same on every one), each request with where it comes
// from, and each distinct pair of matched rules once.
func groupText(g DifferenceGroup) string {
	if len(g.Differences) == 1 {
		return differenceText(g.Differences[0])
	}
	var b strings.Builder
	first := g.Differences[0]
	fmt.Fprintf(&b, "%d requests answered with the same difference:\n", len(g.Differences))
	for _, f := range first.Fields {
		fmt.Fprintf(&b, "  %-9s ingress-nginx %-30s gateway-api %s\n", f+":", dash.Quoted(first.Ingress.Field(f)), dash.Quoted(first.Gateway.Field(f)))
	}
	seen := map[string]bool{}
	var rules []string
	for _, d := range g.Differences {
		fmt.Fprintf(&b, "  %s (from %s)\n", d.RequestLine(), d.Request.From)
		r := fmt.Sprintf("  rule:     ingress-nginx %s (%s)\n            gateway-api   %s (%s)", dash.Or(d.Ingress.Rule), dash.Or(d.Ingress.Source), dash.Or(d.Gateway.Rule), dash.Or(d.Gateway.Source))
		if !seen[r] {
			seen[r] = true
			rules = append(rules, r)
		}
	}
	b.WriteString(strings.Join(rules, "\n"))
	return b.String()
}

// nonNil is s, or an empty slice for nil (JSON [] rather than null).
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// WriteConvertedProblems writes what the CRDs named crdsName say about the
// converted manifests (conv: them, loaded): objects refused, fields a
// cluster would drop, and the channel notes; it returns false when any was
// refused or pruned.
func WriteConvertedProblems(w io.Writer, crdsName string, conv *watch.LoadResult) bool {
	if len(conv.Problems) > 0 {
		fmt.Fprintf(w, "The converted manifests, judged against the CRDs %s:\n", crdsName)
		for _, p := range conv.Problems {
			fmt.Fprintln(w, "error:", p.String())
		}
	}
	for _, n := range conv.Notes {
		fmt.Fprintln(w, "note:", n.String())
	}
	return len(conv.Problems) == 0
}

// UniqueDropped is dropped with each feature once (the same Ingress,
// place, feature and reason are said once), in order.
func UniqueDropped(dropped []ingressnginx.DroppedFeature) []ingressnginx.DroppedFeature {
	var out []ingressnginx.DroppedFeature
	seen := map[string]bool{}
	for _, d := range dropped {
		if k := droppedLine(d); !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
}

// WriteSecurityDropped lists, last, the dropped features the annotations
// table marks security-relevant (the converted routes let in clients
// ingress-nginx refused), once each; it returns false when there are any.
func WriteSecurityDropped(w io.Writer, dropped []ingressnginx.DroppedFeature) bool {
	var lines []string
	seen := map[string]bool{}
	for _, d := range dropped {
		line := "  " + strings.TrimPrefix(d.Source.String()+": ", ": ") + d.Ingress.String() + ": " + d.What + ": " + d.Why
		if d.Security && !seen[line] {
			seen[line] = true
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		return true
	}
	fmt.Fprintf(w, "\nSecurity-relevant, not carried over (exit status 1): the converted routes let in clients ingress-nginx refused, until you configure %s with your implementation's policy:\n",
		Plural(len(lines), "setting"))
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	return false
}

// WriteDropped lists what the conversion did not carry over, once each.
func WriteDropped(w io.Writer, dropped []ingressnginx.DroppedFeature) {
	for _, d := range UniqueDropped(dropped) {
		fmt.Fprintln(w, droppedLine(d))
	}
}

// droppedLine is a dropped feature in words, with its place.
func droppedLine(d ingressnginx.DroppedFeature) string {
	return strings.TrimPrefix(d.Source.String()+": "+d.Ingress.String()+": not carried over: "+d.What+": "+d.Why, ": ")
}
