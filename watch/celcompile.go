package watch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	celgo "github.com/google/cel-go/cel"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apiextensionscel "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	apiservercel "k8s.io/apiserver/pkg/cel"
)

// This file compiles x-kubernetes-validations into the celNode tree that
// celrules.go evaluates. Compiling a rule (parse, type-check, plan) is most
// of the cost of setting up a CRD, so the tree is built first, cheaply, and
// a node's rules are compiled when a value first reaches them (celLazy):
// rules of fields no manifest sets are never compiled (for a folder of
// HTTPRoutes that use matches, filters and weights, most of HTTPRoute's
// rules), and the rules that are reached compile on the load's workers. A
// cel-go Env is safe for concurrent use once built, and each rule writes
// only its own celRule, so the result does not depend on the order of
// compilation.
//
// Gateway API schemas repeat themselves (parentRefs, backendRefs and filters
// appear at several places with the same rules), so nodes with identical
// schemas and rules share one compiled set: HTTPRoute v1 has 106 rules on
// 31 nodes but only 60 rules on 17 distinct nodes. A compiled program and
// the schema adapter are read-only, and the rules see the same declared
// types wherever the schema is the same.

var selfTypeCounter atomic.Int64

// celCompiler collects the rules of a schema while the tree is built.
type celCompiler struct {
	// ruleSets holds the distinct rule sets queued so far, by celRulesKey.
	ruleSets map[string][]*celRuleSet
}

// celRuleSet is the rules of one node, compiled for every node with the
// same rules and the same schema.
type celRuleSet struct {
	node   *structuralschema.Structural // schema the rules are attached to
	schema []byte                       // node as JSON; nil until compared
	first  *celNode                     // node holding the compiled rules; nil until queued
}

// celCompileJob is one rule waiting to be compiled.
type celCompileJob struct {
	rule   *celRule
	schema *structuralschema.Structural // node the rule is attached to
	env    func() (*celgo.Env, error)   // shared by the rules of the node
}

// compileCEL makes the tree of a CRD version's rules, each node's rules
// compiled on first use (celLazy); nil when there are none.
func compileCEL(s *structuralschema.Structural) *celNode {
	var c celCompiler
	return c.compileCELNode(s, s, true, model.SchemaDeclType(s, true))
}

// celLazy compiles the rules of a node (and of every node sharing them)
// once, when validateRules first needs them.
type celLazy struct {
	once sync.Once
	jobs []celCompileJob
}

// compile compiles the rules; every caller returns after they are. The
// rules compile side by side on up to GOMAXPROCS goroutines: the first
// document to reach a node waits for all of its rules, and so does every
// other worker that reaches it meanwhile (a check of one HTTPRoute spent a
// third of its CPU compiling, on one core of two).
func (l *celLazy) compile() {
	l.once.Do(func() {
		parallel(len(l.jobs), func(i int) {
			j := &l.jobs[i]
			env, err := j.env()
			if err != nil {
				j.rule.compileErr = err
				return
			}
			j.rule.compile(j.schema, env)
		})
		l.jobs = nil
	})
}

func (c *celCompiler) compileCELNode(validation, node *structuralschema.Structural, isRoot bool, declType *apiservercel.DeclType) *celNode {
	n := &celNode{typ: node.Type}
	if len(validation.XValidations) > 0 {
		set := c.ruleSet(celRulesKey(validation, isRoot, declType), node)
		if set.first != nil {
			n.schema, n.rules, n.lazy = set.first.schema, set.first.rules, set.first.lazy
		} else {
			schema := node
			if isRoot {
				schema = model.WithTypeAndObjectMeta(node)
			}
			n.schema = newCachedSchema(&model.Structural{Structural: schema})
			n.lazy = &celLazy{}
			n.rules = compileRules(n.lazy, node, validation.XValidations, declType)
			set.first = n
		}
	}
	var elemType *apiservercel.DeclType
	if declType != nil {
		elemType = declType.ElemType
	}
	if validation.Items != nil && node.Items != nil {
		n.items = c.compileCELNode(validation.Items, node.Items, node.Items.XEmbeddedResource, elemType)
	}
	for name, vp := range validation.Properties {
		np, ok := node.Properties[name]
		if !ok {
			continue
		}
		var fieldType *apiservercel.DeclType
		if escaped, ok := apiservercel.Escape(name); ok {
			if declType == nil {
				continue
			}
			f, ok := declType.Fields[escaped]
			if !ok {
				continue
			}
			fieldType = f.Type
		} else {
			fieldType = model.SchemaDeclType(&np, np.XEmbeddedResource)
			if fieldType == nil {
				continue
			}
		}
		if child := c.compileCELNode(&vp, &np, np.XEmbeddedResource, fieldType); child != nil {
			if n.properties == nil {
				n.properties = map[string]*celNode{}
			}
			n.properties[name] = child
		}
	}
	if validation.AdditionalProperties != nil && validation.AdditionalProperties.Structural != nil &&
		node.AdditionalProperties != nil && node.AdditionalProperties.Structural != nil {
		ap := node.AdditionalProperties.Structural
		n.additional = c.compileCELNode(validation.AdditionalProperties.Structural, ap, ap.XEmbeddedResource, elemType)
	}
	if validation.ValueValidation != nil {
		for i := range validation.ValueValidation.AllOf {
			nested := nestedStructural(&validation.ValueValidation.AllOf[i])
			if child := c.compileCELNode(nested, node, isRoot, declType); child != nil {
				n.allOf = append(n.allOf, child)
			}
		}
	}
	if len(n.rules) == 0 && n.items == nil && n.additional == nil && len(n.properties) == 0 && len(n.allOf) == 0 {
		return nil
	}
	return n
}

// ruleSet returns the rule set of a node whose rules have the given key:
// an earlier one when a node with the same rules had the same schema (from
// which the declared type of self is built), else a new one. Schemas are
// compared only between nodes with the same rules, so unique rule sets (on
// the root, on spec) cost nothing.
func (c *celCompiler) ruleSet(key string, node *structuralschema.Structural) *celRuleSet {
	if key == "" {
		return &celRuleSet{node: node}
	}
	var schema []byte
	for _, set := range c.ruleSets[key] {
		if set.schema == nil {
			set.schema = marshalSchema(set.node)
		}
		if schema == nil {
			schema = marshalSchema(node)
		}
		if schema != nil && bytes.Equal(schema, set.schema) {
			return set
		}
	}
	if c.ruleSets == nil {
		c.ruleSets = map[string][]*celRuleSet{}
	}
	set := &celRuleSet{node: node, schema: schema}
	c.ruleSets[key] = append(c.ruleSets[key], set)
	return set
}

// celRulesKey identifies the rules of a node and how they are compiled,
// apart from the node's schema; "" if they cannot be encoded (then the
// node's rules are compiled for it alone).
func celRulesKey(validation *structuralschema.Structural, isRoot bool, declType *apiservercel.DeclType) string {
	rules, err := json.Marshal(validation.XValidations)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%t %t %s", isRoot, declType == nil, rules)
}

// marshalSchema encodes a schema for comparison; nil if it cannot be
// encoded, which matches nothing.
func marshalSchema(s *structuralschema.Structural) []byte {
	b, err := json.Marshal(s)
	if err != nil {
		return nil
	}
	return b
}

// nestedStructural turns an allOf entry into a Structural carrying only
// what rule compilation looks at.
func nestedStructural(nvv *structuralschema.NestedValueValidation) *structuralschema.Structural {
	s := &structuralschema.Structural{ValueValidation: &nvv.ValueValidation, ValidationExtensions: nvv.ValidationExtensions}
	if nvv.Items != nil {
		s.Items = nestedStructural(nvv.Items)
	}
	if len(nvv.Properties) > 0 {
		s.Properties = map[string]structuralschema.Structural{}
		for k, v := range nvv.Properties {
			s.Properties[k] = *nestedStructural(&v)
		}
	}
	if nvv.AdditionalProperties != nil {
		s.AdditionalProperties = &structuralschema.StructuralOrBool{Structural: nestedStructural(nvv.AdditionalProperties), Bool: true}
	}
	return s
}

// compileRules returns the rules of one node and queues their compilation
// on lazy.
// The rules share the node's environment (one with oldSelf plain, one with
// oldSelf optional), built once, when the first rule needing it compiles.
func compileRules(lazy *celLazy, s *structuralschema.Structural, rules apiextensionsv1.ValidationRules, declType *apiservercel.DeclType) []celRule {
	out := make([]celRule, len(rules))
	if declType == nil {
		for i, r := range rules {
			out[i] = celRule{rule: r, compileErr: fmt.Errorf("failed to convert to declType for CEL validation rules")}
		}
		return out
	}
	typeName := fmt.Sprintf("selfType%d", selfTypeCounter.Add(1))
	var envs [2]func() (*celgo.Env, error) // by optionalOldSelf
	for i, optional := range []bool{false, true} {
		envs[i] = sync.OnceValues(func() (*celgo.Env, error) {
			return celRuleEnv(declType, typeName, optional)
		})
	}
	for i, r := range rules {
		optional := r.OptionalOldSelf != nil && *r.OptionalOldSelf
		out[i] = celRule{rule: r, optionalOldSelf: optional}
		env := envs[0]
		if optional {
			env = envs[1]
		}
		lazy.jobs = append(lazy.jobs, celCompileJob{rule: &out[i], schema: s, env: env})
	}
	return out
}

func (r *celRule) compile(s *structuralschema.Structural, env *celgo.Env) {
	if strings.TrimSpace(r.rule.Rule) == "" {
		return
	}
	ast, issues := env.Compile(r.rule.Rule)
	if issues != nil {
		r.compileErr = fmt.Errorf("compilation failed: %s", issues.String())
		return
	}
	if ast.OutputType() != celgo.BoolType {
		r.compileErr = fmt.Errorf("cel expression must evaluate to a bool")
		return
	}
	checked, err := celgo.AstToCheckedExpr(ast)
	if err != nil {
		r.compileErr = err
		return
	}
	for _, ref := range checked.ReferenceMap {
		if ref.Name == apiextensionscel.OldScopedVarName {
			r.usesOldSelf = true
		}
	}
	if r.program, err = env.Program(ast, celgo.EvalOptions(celgo.OptOptimize)); err != nil {
		r.compileErr = fmt.Errorf("program instantiation failed: %w", err)
		return
	}
	if r.rule.MessageExpression != "" {
		if ast, issues := env.Compile(r.rule.MessageExpression); issues == nil && ast.OutputType() == celgo.StringType {
			r.message, _ = env.Program(ast, celgo.EvalOptions(celgo.OptOptimize))
		}
	}
	if r.rule.FieldPath != "" {
		if p, _, err := apiextensionscel.ValidFieldPath(r.rule.FieldPath, s); err == nil {
			r.fieldPath = p.String()
		}
	}
}
