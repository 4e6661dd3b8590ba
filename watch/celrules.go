package watch

import (
	"fmt"
	"strings"
	"sync"

	celgo "github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionscel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/cel/common"
)

// This file evaluates x-kubernetes-validations like the apiserver's
// k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel.Validator, with
// the same environment, the same rule semantics (create: no oldSelf) and the
// same error wording, but two things changed for speed, because gwdev
// validates thousands of objects on every start:
//
//   - programs are compiled without runtime cost tracking or cost limits
//     (celenv.go; the rules come from the Gateway API CRDs, whose cost the
//     apiserver already bounds when the CRD is installed);
//   - the schema adapter caches Properties(): the upstream adapter builds a
//     new map on every field access, which dominated the profile.

// celNode holds the compiled rules of one schema node and the nodes below it
// that have rules.
type celNode struct {
	schema     common.Schema // schema seen by the rules (cached adapter)
	typ        string
	rules      []celRule
	lazy       *celLazy // compiles rules on first use; nil without rules
	properties map[string]*celNode
	items      *celNode
	additional *celNode
	allOf      []*celNode
	memo       celMemo
	// trace remembers what the rules read of values that passed
	// (celtrace.go).
	trace celTraceMemo
}

// celRule is one compiled x-kubernetes-validations rule.
type celRule struct {
	rule            apiextensionsv1.ValidationRule
	program         celgo.Program
	message         celgo.Program // messageExpression, or nil
	fieldPath       string        // normalized fieldPath, or ""
	usesOldSelf     bool
	optionalOldSelf bool
	compileErr      error
}

// validate evaluates the rules at and below n against obj (create
// semantics: there is no old object).
func (n *celNode) validate(path *celPath, obj any, errs field.ErrorList) field.ErrorList {
	if n == nil || obj == nil {
		return errs
	}
	errs = n.validateRules(path, obj, errs)
	for _, a := range n.allOf {
		errs = a.validate(path, obj, errs)
	}
	switch obj := obj.(type) {
	case []any:
		if n.items != nil {
			for i, v := range obj {
				path.push(celPathStep{index: i, kind: celIndex})
				errs = n.items.validate(path, v, errs)
				path.pop()
			}
		}
	case map[string]any:
		if n.additional != nil {
			for k, v := range obj {
				path.push(celPathStep{name: k, kind: celKey})
				errs = n.additional.validate(path, v, errs)
				path.pop()
			}
		}
		for k, child := range n.properties {
			if v, ok := obj[k]; ok {
				path.push(celPathStep{name: k, kind: celChild})
				errs = child.validate(path, v, errs)
				path.pop()
			}
		}
	}
	return errs
}

// celPath is the path of the value validate is at, as steps from the
// root, made into a field.Path only for an error: building the field.Path
// of every value visited allocated 20 MB for 10,000 HTTPRoutes.
type celPath struct{ steps []celPathStep }

// celPaths holds empty celPaths for validate's callers to reuse.
var celPaths = sync.Pool{New: func() any { return &celPath{steps: make([]celPathStep, 0, 16)} }}

// celPathStep is one step of a celPath: a field, a list item or a map's
// value.
type celPathStep struct {
	kind  celPathKind
	name  string // a field's name or a map's key
	index int    // a list item's index
}

// celPathKind says how a celPathStep goes down.
type celPathKind uint8

const (
	celChild celPathKind = iota // a field
	celIndex                    // a list item
	celKey                      // a map's value
)

func (p *celPath) push(s celPathStep) { p.steps = append(p.steps, s) }
func (p *celPath) pop()               { p.steps = p.steps[:len(p.steps)-1] }

// fieldPath is p as a field.Path, as validate built it before (nil at the
// root).
func (p *celPath) fieldPath() *field.Path {
	var out *field.Path
	for _, s := range p.steps {
		switch s.kind {
		case celIndex:
			out = out.Index(s.index)
		case celKey:
			out = out.Key(s.name)
		default:
			out = out.Child(s.name)
		}
	}
	return out
}

// celActivation resolves self (and oldSelf, which is never set on create).
type celActivation struct {
	self       ref.Val
	hasOldSelf bool
}

func (a *celActivation) ResolveName(name string) (any, bool) {
	switch name {
	case apiextensionscel.ScopedVarName:
		return a.self, true
	case apiextensionscel.OldScopedVarName:
		return types.OptionalNone, a.hasOldSelf
	}
	return nil, false
}

func (a *celActivation) Parent() interpreter.Activation { return nil }

func (n *celNode) validateRules(at *celPath, obj any, errs field.ErrorList) (out field.ErrorList) {
	if len(n.rules) == 0 {
		return errs
	}
	var (
		buf        [128]byte
		key        []byte
		memoizable bool
	)
	if n.memo.useful() {
		key, memoizable = appendCanonical(buf[:0], obj)
		if memoizable && n.memo.known(bytesView(key)) {
			return errs
		}
	}
	var tr *celTracer
	if n.trace.useful() {
		if n.trace.known(obj) {
			return errs
		}
		tr = &celTracer{}
	}
	n.lazy.compile()
	before := len(errs)
	defer func() {
		if len(out) != before {
			return
		}
		if memoizable {
			n.memo.remember(string(key))
		}
		if tr != nil {
			n.trace.remember(tr)
		}
	}()
	var self ref.Val
	if tr != nil {
		self = tracedCELValue(obj, n.schema, tr)
	} else {
		self = celValue(obj, n.schema)
	}
	activation := &celActivation{self: self}
	optional := &celActivation{self: self, hasOldSelf: true}
	for i := range n.rules {
		r := &n.rules[i]
		if r.compileErr != nil {
			errs = append(errs, field.Invalid(at.fieldPath(), n.typ, fmt.Sprintf("rule compile error: %v", r.compileErr)))
			continue
		}
		if r.program == nil || (r.usesOldSelf && !r.optionalOldSelf) {
			continue // empty rule, or a transition rule: not evaluated on create
		}
		act := activation
		if r.optionalOldSelf {
			act = optional
		}
		result, _, err := r.program.Eval(act)
		if err != nil {
			if strings.HasPrefix(err.Error(), "no such overload") {
				errs = append(errs, field.Invalid(at.fieldPath(), n.typ, fmt.Sprintf("'%v': call arguments did not match a supported operator, function or macro signature for rule: %v", err, ruleErrorString(r.rule))))
			} else {
				errs = append(errs, field.Invalid(at.fieldPath(), n.typ, fmt.Sprintf("%v evaluating rule: %v", err, ruleErrorString(r.rule))))
			}
			continue
		}
		if result == types.True {
			continue
		}
		path := at.fieldPath()
		if r.fieldPath != "" {
			path = path.Child(r.fieldPath)
		}
		detail := r.messageFor(activation)
		var value any = obj
		if n.typ == "object" || n.typ == "array" {
			value = field.OmitValueType{}
		}
		errs = append(errs, fieldErrorForReason(path, value, detail, r.rule.Reason))
	}
	return errs
}

// messageFor evaluates messageExpression, falling back to message or the
// rule itself as the apiserver does.
func (r *celRule) messageFor(act interpreter.Activation) string {
	if r.message != nil {
		if v, _, err := r.message.Eval(act); err == nil {
			if s, ok := v.Value().(string); ok {
				if s = strings.TrimSpace(s); s != "" && !strings.Contains(s, "\n") {
					return s
				}
			}
		}
	}
	if r.rule.Message == "" {
		return "failed rule: " + ruleErrorString(r.rule)
	}
	return strings.TrimSpace(r.rule.Message)
}

func ruleErrorString(rule apiextensionsv1.ValidationRule) string {
	if rule.Message != "" {
		return strings.TrimSpace(rule.Message)
	}
	return strings.TrimSpace(rule.Rule)
}

func fieldErrorForReason(path *field.Path, value any, detail string, reason *apiextensionsv1.FieldValueErrorReason) *field.Error {
	if reason == nil {
		return field.Invalid(path, value, detail)
	}
	switch *reason {
	case apiextensionsv1.FieldValueForbidden:
		return field.Forbidden(path, detail)
	case apiextensionsv1.FieldValueRequired:
		return field.Required(path, detail)
	case apiextensionsv1.FieldValueDuplicate:
		return field.Duplicate(path, value)
	}
	return field.Invalid(path, value, detail)
}

// cachedSchema adapts a schema for CEL values and remembers Properties,
// Items and AdditionalProperties, which the upstream adapter rebuilds on
// every call. The whole tree is wrapped once, at compile time.
type cachedSchema struct {
	common.Schema
	properties map[string]common.Schema
	items      common.Schema
	additional common.SchemaOrBool
	withMeta   common.Schema
}

func newCachedSchema(s common.Schema) *cachedSchema {
	c := newCachedSchemaTree(s)
	if s.IsXEmbeddedResource() {
		c.withMeta = newCachedSchemaTree(s.WithTypeAndObjectMeta())
	}
	return c
}

func newCachedSchemaTree(s common.Schema) *cachedSchema {
	c := &cachedSchema{Schema: s}
	if props := s.Properties(); props != nil {
		c.properties = make(map[string]common.Schema, len(props))
		for k, v := range props {
			c.properties[k] = newCachedSchema(v)
		}
	}
	if items := s.Items(); items != nil {
		c.items = newCachedSchema(items)
	}
	if ap := s.AdditionalProperties(); ap != nil {
		var inner common.Schema
		if ap.Schema() != nil {
			inner = newCachedSchema(ap.Schema())
		}
		c.additional = &cachedSchemaOrBool{schema: inner, allows: ap.Allows()}
	}
	return c
}

func (c *cachedSchema) Properties() map[string]common.Schema      { return c.properties }
func (c *cachedSchema) Items() common.Schema                      { return c.items }
func (c *cachedSchema) AdditionalProperties() common.SchemaOrBool { return c.additional }

// WithTypeAndObjectMeta is used for embedded resources (none in Gateway
// API); it is computed up front so that the tree is read-only.
func (c *cachedSchema) WithTypeAndObjectMeta() common.Schema {
	if c.withMeta == nil {
		return c.Schema.WithTypeAndObjectMeta()
	}
	return c.withMeta
}

type cachedSchemaOrBool struct {
	schema common.Schema
	allows bool
}

func (c *cachedSchemaOrBool) Schema() common.Schema { return c.schema }
func (c *cachedSchemaOrBool) Allows() bool          { return c.allows }
