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
// then every rule is compiled at once on GOMAXPROCS goroutines. A cel-go
// Env is safe for concurrent use once built, and each rule writes only its
// own celRule, so the result does not depend on the order of compilation.
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
	jobs []celCompileJob
	// compiled holds the nodes whose rules are queued, by what
	// celRulesKey says of their rules.
	compiled map[string][]*celCompiledNode
}

// celCompiledNode is a node whose rules are queued, with what compiling
// them depends on besides the rules themselves.
type celCompiledNode struct {
	node   *structuralschema.Structural // schema the rules are attached to
	schema []byte                       // node as JSON, computed when needed
	n      *celNode
}

// celCompileJob is one rule waiting to be compiled.
type celCompileJob struct {
	rule   *celRule
	schema *structuralschema.Structural // node the rule is attached to
	env    func() (*celgo.Env, error)   // shared by the rules of the node
}

// compileCEL compiles every rule of a CRD version's schema; nil when there
// are none.
func compileCEL(s *structuralschema.Structural) *celNode {
	var c celCompiler
	root := c.compileCELNode(s, s, true, model.SchemaDeclType(s, true))
	parallel(len(c.jobs), func(i int) {
		j := &c.jobs[i]
		env, err := j.env()
		if err != nil {
			j.rule.compileErr = err
			return
		}
		j.rule.compile(j.schema, env)
	})
	return root
}

func (c *celCompiler) compileCELNode(validation, node *structuralschema.Structural, isRoot bool, declType *apiservercel.DeclType) *celNode {
	n := &celNode{typ: node.Type}
	if len(validation.XValidations) > 0 {
		if same := c.sameRules(validation, node, isRoot, declType); same != nil {
			n.schema, n.rules = same.schema, same.rules
		} else {
			schema := node
			if isRoot {
				schema = model.WithTypeAndObjectMeta(node)
			}
			n.schema = newCachedSchema(&model.Structural{Structural: schema})
			n.rules = c.compileRules(node, validation.XValidations, declType)
			c.remember(validation, node, isRoot, declType, n)
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

// sameRules returns an earlier node whose compiled rules are also those of
// this one: same rules, same isRoot, and the same schema, from which the
// declared type of self is built. Only nodes with the same rules have their
// schemas compared, so unique rule sets (on the root, on spec) cost nothing.
func (c *celCompiler) sameRules(validation, node *structuralschema.Structural, isRoot bool, declType *apiservercel.DeclType) *celNode {
	key, ok := celRulesKey(validation, isRoot, declType)
	if !ok {
		return nil
	}
	var schema []byte
	for _, cand := range c.compiled[key] {
		if cand.schema == nil {
			if cand.schema, ok = marshalSchema(cand.node); !ok {
				continue
			}
		}
		if schema == nil {
			if schema, ok = marshalSchema(node); !ok {
				return nil
			}
		}
		if bytes.Equal(schema, cand.schema) {
			return cand.n
		}
	}
	return nil
}

// remember records n, whose rules were just queued, for sameRules.
func (c *celCompiler) remember(validation, node *structuralschema.Structural, isRoot bool, declType *apiservercel.DeclType, n *celNode) {
	key, ok := celRulesKey(validation, isRoot, declType)
	if !ok {
		return
	}
	if c.compiled == nil {
		c.compiled = map[string][]*celCompiledNode{}
	}
	c.compiled[key] = append(c.compiled[key], &celCompiledNode{node: node, n: n})
}

// celRulesKey identifies the rules of a node and how they are compiled
// apart from the node's schema.
func celRulesKey(validation *structuralschema.Structural, isRoot bool, declType *apiservercel.DeclType) (string, bool) {
	rules, err := json.Marshal(validation.XValidations)
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("%t %t %s", isRoot, declType == nil, rules), true
}

func marshalSchema(s *structuralschema.Structural) ([]byte, bool) {
	b, err := json.Marshal(s)
	return b, err == nil
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

// compileRules returns the rules of one node and queues their compilation.
// The rules share the node's environment (one with oldSelf plain, one with
// oldSelf optional), built once, when the first rule needing it compiles.
func (c *celCompiler) compileRules(s *structuralschema.Structural, rules apiextensionsv1.ValidationRules, declType *apiservercel.DeclType) []celRule {
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
		c.jobs = append(c.jobs, celCompileJob{rule: &out[i], schema: s, env: env})
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
