package watch

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// issue is one reason an object is rejected, before it is placed in the
// file.
type issue struct {
	// field is the JSON path of the offending field ("" for the object).
	field string
	// msg is the complete message, starting with field when there is one.
	msg string
	// pruned is true for a field a CRD bundle's schema lacks: the object
	// is loaded without it (Problem.Pruned).
	pruned bool
	// kind is Problem.Kind.
	kind ProblemKind
}

// newIssue builds an issue of that kind about path with the given message
// body.
func newIssue(kind ProblemKind, path, body string) issue {
	if path == "" {
		return issue{msg: body, kind: kind}
	}
	return issue{field: path, msg: path + ": " + body, kind: kind}
}

// fieldErrorKinds are the ProblemKinds of the apiserver's field error
// types; the others (Forbidden, TooLong, NotFound, Internal) have none.
var fieldErrorKinds = map[field.ErrorType]ProblemKind{
	field.ErrorTypeRequired:     ProblemRequired,
	field.ErrorTypeNotSupported: ProblemUnsupported,
	field.ErrorTypeInvalid:      ProblemInvalid,
	field.ErrorTypeTypeInvalid:  ProblemInvalid,
	field.ErrorTypeTooMany:      ProblemTooMany,
	field.ErrorTypeDuplicate:    ProblemDuplicate,
}

// fieldIssues converts apiserver validation errors, dropping the redundant
// "<path> in body" that OpenAPI validation repeats in its details.
func fieldIssues(errs field.ErrorList) []issue {
	out := make([]issue, 0, len(errs))
	for _, e := range errs {
		out = append(out, fieldIssue(e))
	}
	return out
}

func fieldIssue(e *field.Error) issue {
	path := e.Field
	if path == "<nil>" {
		path = ""
	}
	c := *e
	c.Detail = strings.TrimPrefix(c.Detail, path+" in body ")
	return newIssue(fieldErrorKinds[e.Type], path, c.ErrorBody())
}
