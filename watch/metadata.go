package watch

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"
)

// nameRule returns how the apiserver validates metadata.name of a kind.
func nameRule(spec *kindSpec) apimachineryvalidation.ValidateNameFunc {
	switch spec {
	case kindService:
		return apimachineryvalidation.NameIsDNS1035Label
	case kindNamespace:
		return apimachineryvalidation.NameIsDNSLabel
	}
	return apimachineryvalidation.NameIsDNSSubdomain
}

// Almost every object's metadata is a name and a namespace, both valid
// DNS names: ValidateObjectMeta then finds nothing, after building a
// field path per field it checks and matching the names with regexps (4%
// of the load's CPU). simpleMetaValid recognises that case with automata
// of the same patterns (patternDFA) and the same lengths; anything else
// goes to ValidateObjectMeta. TestSimpleMetaValidMatchesAPIServer keeps it
// within what ValidateObjectMeta accepts.
//
// The automata are built on first use (3 ms and 90 KB at every process
// start otherwise, `gwdev version` included; issue 42, session 19).
var metaAutomata = sync.OnceValue(func() *metaDFAs {
	return &metaDFAs{
		dnsLabel:     compilePatternDFA(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`),
		dns1035Label: compilePatternDFA(`^[a-z]([-a-z0-9]*[a-z0-9])?$`),
		dnsSubdomain: compilePatternDFA(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`),
		labelName:    compilePatternDFA(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`),
		labelValue:   compilePatternDFA(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`),
	}
})

// metaDFAs are the automata of simpleMetaValid. labelName is a label key
// without a prefix (IsQualifiedName's name part); labelValue a label's
// value (IsValidLabelValue).
type metaDFAs struct {
	dnsLabel, dns1035Label, dnsSubdomain, labelName, labelValue *patternDFA
}

// simpleMetaValid reports whether ValidateObjectMeta(meta, spec.namespaced,
// nameRule(spec)) certainly finds nothing, for metadata decodeSimpleMeta
// read (name, namespace, labels and annotations only): no annotations,
// labels whose keys have no prefix, and names nameRule and the namespace
// rule take. false only means "not certain".
func simpleMetaValid(meta *metav1.ObjectMeta, spec *kindSpec) bool {
	if meta.GenerateName != "" || len(meta.Annotations) > 0 || meta.Generation != 0 {
		return false
	}
	a := metaAutomata()
	for k, v := range meta.Labels {
		if len(k) > 63 || len(v) > 63 || !dfaMatches(a.labelName, k) || !dfaMatches(a.labelValue, v) {
			return false
		}
	}
	name, limit := a.dnsSubdomain, 253 // NameIsDNSSubdomain
	switch spec {
	case kindService:
		name, limit = a.dns1035Label, 63 // NameIsDNS1035Label
	case kindNamespace:
		name, limit = a.dnsLabel, 63 // NameIsDNSLabel
	}
	if len(meta.Name) > limit || !dfaMatches(name, meta.Name) {
		return false
	}
	if spec.namespaced {
		return len(meta.Namespace) <= 63 && dfaMatches(a.dnsLabel, meta.Namespace)
	}
	return meta.Namespace == ""
}

// dfaMatches reports whether d certainly matches s (false for a value d
// cannot decide).
func dfaMatches(d *patternDFA, s string) bool {
	matched, ok := d.match(s)
	return ok && matched
}

// prepareMetadata strictly decodes metadata, fills in the namespace
// ("default" for namespaced kinds, none for cluster-scoped ones, also in u)
// and validates it like the apiserver's ValidateObjectMeta.
func prepareMetadata(u map[string]any, spec *kindSpec) (metav1.ObjectMeta, []issue) {
	var meta metav1.ObjectMeta
	raw, present := u["metadata"]
	m, ok := raw.(map[string]any)
	if present && raw != nil && !ok {
		u["metadata"] = map[string]any{}
		return meta, []issue{newIssue(ProblemInvalid, "metadata", "Invalid value: must be an object")}
	}
	if m == nil {
		m = map[string]any{}
		u["metadata"] = m
	}
	var issues []issue
	simple := decodeSimpleMeta(m, &meta)
	if !simple {
		var clean map[string]any
		issues, clean = nonStringMetaValues(m)
		issues = append(issues, strictDecode("metadata", clean, &meta)...)
	}
	if spec.namespaced {
		if meta.Namespace == "" {
			meta.Namespace = metav1.NamespaceDefault
		}
		m["namespace"] = meta.Namespace
	} else {
		meta.Namespace = ""
		delete(m, "namespace")
	}
	var errs field.ErrorList
	if !simple || !simpleMetaValid(&meta, spec) {
		errs = apimachineryvalidation.ValidateObjectMeta(&meta, spec.namespaced, nameRule(spec), field.NewPath("metadata"))
	}
	if meta.Name == "" && meta.GenerateName != "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "generateName is not supported by kubectl apply or gwdev"))
	}
	return meta, append(issues, fieldIssues(errs)...)
}

// decodeSimpleMeta decodes the metadata most manifests have (name,
// namespace, string labels and annotations) directly, as strictDecode
// would. It returns false, leaving meta untouched, for anything else: the
// JSON round trip of strictDecode is then needed for its checks and
// wording.
func decodeSimpleMeta(m map[string]any, meta *metav1.ObjectMeta) bool {
	for k, v := range m {
		switch k {
		case "name", "namespace":
			if _, ok := v.(string); !ok {
				return false
			}
		case "labels", "annotations":
			mv, ok := v.(map[string]any)
			if !ok {
				return false
			}
			for _, s := range mv {
				if _, ok := s.(string); !ok {
					return false
				}
			}
		default:
			return false
		}
	}
	meta.Name, _ = m["name"].(string)
	meta.Namespace, _ = m["namespace"].(string)
	meta.Labels = stringMap(m["labels"])
	meta.Annotations = stringMap(m["annotations"])
	return true
}

// stringMap converts a map checked by decodeSimpleMeta; nil stays nil.
func stringMap(v any) map[string]string {
	mv, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := make(map[string]string, len(mv))
	for k, s := range mv {
		out[k] = s.(string)
	}
	return out
}

// strictDecode decodes v into out like the apiserver's strict JSON decoding:
// unknown and duplicate fields and type mismatches are issues. prefix is
// the path of v in the object ("" for the object itself).
func strictDecode(prefix string, v any, out any) []issue {
	data, err := json.Marshal(v)
	if err != nil {
		return []issue{newIssue(ProblemInvalid, prefix, "Invalid value: "+err.Error())}
	}
	strictErrs, err := sigsjson.UnmarshalStrict(data, out)
	var issues []issue
	if err != nil {
		issues = append(issues, decodeIssue(prefix, err))
	}
	for _, e := range strictErrs {
		issues = append(issues, strictIssue(prefix, e.Error()))
	}
	return issues
}

// strictIssue turns `unknown field "spec.foo"` into an issue about
// prefix.spec.foo.
func strictIssue(prefix, msg string) issue {
	for _, kind := range []struct {
		prefix string
		kind   ProblemKind
	}{{"unknown field ", ProblemUnknownField}, {"duplicate field ", ""}} {
		if rest, ok := strings.CutPrefix(msg, kind.prefix); ok {
			path := joinPath(prefix, strings.Trim(rest, `"`))
			return issue{field: path, msg: kind.prefix + `"` + path + `"`, kind: kind.kind}
		}
	}
	return newIssue("", prefix, msg)
}

// decodeIssue places an encoding/json type error (`json: cannot unmarshal
// string into Go struct field ServicePort.spec.ports.port of type int32`).
func decodeIssue(prefix string, err error) issue {
	msg := err.Error()
	path := prefix
	if _, rest, ok := strings.Cut(msg, "Go struct field "); ok {
		if f, _, ok := strings.Cut(rest, " of type"); ok {
			if _, p, ok := strings.Cut(f, "."); ok {
				path = joinPath(prefix, p)
			}
		}
	}
	return newIssue("", path, msg)
}

func joinPath(prefix, path string) string {
	switch {
	case prefix == "":
		return path
	case path == "":
		return prefix
	}
	return prefix + "." + path
}

// nonStringMetaValues reports every label and annotation value that is not
// a string, once each and at its own key — typically an unquoted true, yes,
// on or number, which YAML reads as another type — and returns m without
// them, for the rest of the decoding (m itself is not modified).
func nonStringMetaValues(m map[string]any) ([]issue, map[string]any) {
	var issues []issue
	clean, cloned := m, false
	for _, field := range []string{"labels", "annotations"} {
		mv, ok := m[field].(map[string]any)
		if !ok {
			continue
		}
		var keep map[string]any
		for _, k := range slices.Sorted(maps.Keys(mv)) {
			if _, ok := mv[k].(string); ok || mv[k] == nil {
				continue
			}
			if keep == nil {
				keep = maps.Clone(mv)
			}
			delete(keep, k)
			issues = append(issues, newIssue(ProblemInvalid, "metadata."+field+"["+k+"]", fmt.Sprintf(
				"Invalid value: %v: %s values are strings, and YAML reads this unquoted value as a %s%s: quote it as written",
				mv[k], strings.TrimSuffix(field, "s"), yamlTypeName(mv[k]), yamlTypeExamples(mv[k]))))
		}
		if keep != nil {
			if !cloned {
				clean, cloned = maps.Clone(m), true
			}
			clean[field] = keep
		}
	}
	return issues, clean
}

// yamlTypeName names the type YAML gave a value.
func yamlTypeName(v any) string {
	switch v.(type) {
	case bool:
		return "boolean"
	case int, int64, uint64, float64:
		return "number"
	case map[string]any:
		return "mapping"
	case []any:
		return "list"
	}
	return fmt.Sprintf("%T", v)
}

// yamlTypeExamples names the unquoted words YAML turns into v's type.
func yamlTypeExamples(v any) string {
	if _, ok := v.(bool); ok {
		return " (true, false, yes, no, on, off)"
	}
	return ""
}
