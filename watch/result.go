package watch

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine"
)

// LoadResult is what one load produced: the objects that passed validation,
// the problems found and the objects gwdev does not know. Results of several
// loads (for example one per file) combine with Merge.
type LoadResult struct {
	// Snapshot holds only the objects that passed validation, each slice
	// sorted by namespace/name, with Sources filled for every object. It is
	// never nil.
	Snapshot *engine.Snapshot
	// Problems are sorted by file, line and column; nil means none.
	Problems []Problem
	// Skipped lists objects of kinds gwdev does not know, sorted by file and
	// line. They are not errors.
	Skipped []Skipped
	// Files is the number of manifest files read.
	Files int
	// Warnings are things the loader did that deserve a note although
	// nothing was rejected, sorted by file; nil means none.
	Warnings []Warning
	// Notes say, for a Loader without a CRDBundle, which loaded objects an
	// older or standard-channel cluster would not take, sorted by file and
	// line; nil means none (or a Loader with a bundle, which reports
	// Problems instead).
	Notes []Note
}

// Note is one object's channel note: what it needs beyond the oldest
// embedded standard-channel bundle.
type Note struct {
	// File and Line say where the object's document starts.
	File string
	Line int
	// Object names the object.
	Object engine.ObjectKey
	// Message is "needs v1.6+ standard: v1.5.1-standard does not have field
	// spec.x" or "experimental channel only: …".
	Message string
}

// String renders the note as "file:line: Kind/ns/name: message".
func (n Note) String() string {
	return n.File + ":" + strconv.Itoa(n.Line) + ": " + n.Object.String() + ": " + n.Message
}

func compareNotes(a, b Note) int {
	return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Object.String(), b.Object.String()))
}

// Warning is a note about the files read, such as a symlink followed out
// of the folder (gwdev follows those, never silently).
type Warning struct {
	// File is the path the warning is about (the symlink).
	File string
	// Target is where the symlink leads, with every symlink resolved.
	Target string
	// Message is the complete note, without File.
	Message string
}

// String renders the warning as "file: message".
func (w Warning) String() string { return w.File + ": " + w.Message }

// OK reports whether the load found no problems.
func (r *LoadResult) OK() bool { return len(r.Problems) == 0 }

// Problem is one reason a file, document or object was not loaded.
type Problem struct {
	// File is the path as given to the loader ("" when not about a file).
	File string
	// Line and Column are 1-based and point at the offending field when it
	// is known, else at the start of the document; 0 means unknown (for
	// example a file that could not be read).
	Line, Column int
	// Object names the object; the zero value means the document could not
	// be identified.
	Object engine.ObjectKey
	// Field is the JSON path of the offending field, such as
	// spec.listeners[0].tls; "" when the problem is not about one field.
	Field string
	// Root is set when the problem is about the watched folder itself (it
	// does not exist, or is gone), not about a file or object in it.
	Root bool
	// Message is the complete human readable error, worded like the
	// apiserver's and starting with Field when there is one, for example
	// `spec.listeners[0].port: Invalid value: 0: should be greater than or
	// equal to 1`.
	Message string
	// Pruned is true when the object was loaded all the same, without
	// Field: a field the chosen CRD bundle lacks (Loader.CRDs), which
	// kubectl's strict validation refuses and a cluster with validation
	// off drops. The object is served as that cluster stores it.
	Pruned bool
	// Kind says what the problem is, set where it is found, so that the
	// TUI and check explain it without reading Message ("": none of the
	// ProblemKinds).
	Kind ProblemKind
}

// ProblemKind says what a load problem is.
type ProblemKind string

// The kinds of load problems. Field errors take theirs from the
// apiserver's error type (field.ErrorType).
const (
	// ProblemYAML: the document is not valid YAML (or its aliases expand
	// too far).
	ProblemYAML ProblemKind = "YAML"
	// ProblemNotServed: the CRD bundle (Loader.CRDs) does not serve the
	// kind or version, as kubectl's "no matches for kind".
	ProblemNotServed ProblemKind = "NotServed"
	// ProblemRequired: a required field is missing.
	ProblemRequired ProblemKind = "Required"
	// ProblemUnsupported: a value outside the field's listed values.
	ProblemUnsupported ProblemKind = "Unsupported"
	// ProblemUnknownField: a field the schema does not have.
	ProblemUnknownField ProblemKind = "UnknownField"
	// ProblemInvalid: a value that breaks a schema rule or has the wrong
	// type.
	ProblemInvalid ProblemKind = "Invalid"
	// ProblemTooMany: a list longer than the schema allows.
	ProblemTooMany ProblemKind = "TooMany"
	// ProblemDuplicate: a list holds the same key twice.
	ProblemDuplicate ProblemKind = "Duplicate"
	// ProblemAlreadyDefined: a second definition of an object.
	ProblemAlreadyDefined ProblemKind = "AlreadyDefined"
	// ProblemUnreadable: a file or directory that cannot be read.
	ProblemUnreadable ProblemKind = "Unreadable"
	// ProblemBinary: a file that is not UTF-8 text.
	ProblemBinary ProblemKind = "Binary"
	// ProblemTooLarge: a file over MaxFileSize or MaxFileDocuments.
	ProblemTooLarge ProblemKind = "TooLarge"
	// ProblemSymlink: a symlink that is broken or loops.
	ProblemSymlink ProblemKind = "Symlink"
	// ProblemHeader: a document that is not an object with apiVersion and
	// kind, or whose apiVersion gwdev does not know for the kind.
	ProblemHeader ProblemKind = "Header"
	// ProblemNotAllowed: a render command not run or a kustomize remote
	// resource not fetched, for want of the user's consent (Consent).
	ProblemNotAllowed ProblemKind = "NotAllowed"
)

// String renders the problem as "file:line:col: Kind/ns/name: message",
// leaving out the parts that are unknown (just Kind when the object has no
// name). Message already starts with the field path.
func (p Problem) String() string {
	var b strings.Builder
	if p.File != "" {
		b.WriteString(p.File)
		if p.Line > 0 {
			b.WriteString(":" + strconv.Itoa(p.Line))
			if p.Column > 0 {
				b.WriteString(":" + strconv.Itoa(p.Column))
			}
		}
		b.WriteString(": ")
	}
	switch {
	case p.Object.Name != "":
		b.WriteString(p.Object.String() + ": ")
	case p.Object.Kind != "":
		b.WriteString(p.Object.Kind + ": ") // an object without a name
	}
	b.WriteString(p.Message)
	return b.String()
}

// Skipped is an object of a kind gwdev does not load (a Deployment, a CRD of
// another project). Listing it is informational only.
type Skipped struct {
	// File and Line say where the object's document starts.
	File string
	Line int
	// APIVersion, Kind, Namespace and Name are as written in the manifest
	// (Namespace is "" when not written).
	APIVersion, Kind, Namespace, Name string
}

// String renders the entry as "file:line: apiVersion Kind name".
func (s Skipped) String() string {
	name := s.Name
	if s.Namespace != "" {
		name = s.Namespace + "/" + s.Name
	}
	return s.File + ":" + strconv.Itoa(s.Line) + ": " + s.APIVersion + " " + s.Kind + " " + name
}

// GatewayAPI reports whether the object belongs to a Gateway API group
// (standard or experimental): gwdev reports such objects as warnings, since
// a manifest using a Gateway API kind expects it to do something.
func (s Skipped) GatewayAPI() bool {
	group, _, _ := strings.Cut(s.APIVersion, "/")
	return strings.Contains(s.APIVersion, "/") && (group == groupGateway || group == engine.ExperimentalGroup)
}

// compareProblems orders problems by position, then by content, so that
// output is stable.
func compareProblems(a, b Problem) int {
	return cmp.Or(
		cmp.Compare(a.File, b.File),
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.Column, b.Column),
		cmp.Compare(a.Object.String(), b.Object.String()),
		cmp.Compare(a.Field, b.Field),
		cmp.Compare(a.Message, b.Message),
	)
}

func compareSkipped(a, b Skipped) int {
	return cmp.Or(
		cmp.Compare(a.File, b.File),
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.Name, b.Name),
	)
}

func sortProblems(ps []Problem) { slices.SortStableFunc(ps, compareProblems) }
