package watch

import (
	"context"
	"fmt"

	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// loadCRDObject validates a Gateway API object the way the apiserver
// handles a create of a custom resource, then converts it to the v1 type:
//
//  1. strict decoding: fields the schema does not know (pruning) are errors;
//  2. structural defaulting;
//  3. status is dropped (create cannot set status) and generation set to 1;
//  4. ObjectMeta, OpenAPI schema and list-type validation;
//  5. CEL rules (x-kubernetes-validations), unless step 4 found errors that
//     make them meaningless, as the apiserver does.
//
// An object of an older version is validated against that version's schema
// and then read as v1: the CRDs have no conversion webhook, so like the
// apiserver gwdev only relabels the apiVersion, pruning and defaulting with
// the v1 schema.
func (l *Loader) loadCRDObject(u map[string]any, v *servedVersion, g gvk) (metav1.Object, []issue) {
	spec := v.spec
	if v.asKind != "" {
		u["apiVersion"], u["kind"] = v.asAPIVersion, v.asKind
	}
	_, issues := prepareMetadata(u, spec)

	s, err := l.crds.schema(spec.crd, v.schemaVersion)
	if err != nil {
		return nil, append(issues, issue{msg: fmt.Sprintf("internal error: loading the %s schema: %v", spec.kind, err)})
	}
	for _, path := range s.quick.pruneWithNulls(u, s.structural) {
		msg := fmt.Sprintf("unknown field %q", path)
		if hint := migrationHint(spec.kind, path); hint != "" {
			msg += ": " + hint
		} else if where := fieldWhere(g, path); where != "" {
			msg += fmt.Sprintf(" in gwdev's CRDs (%s); the field is %s", DefaultCRDBundleName(), where)
		}
		issues = append(issues, issue{field: path, msg: msg, kind: ProblemUnknownField})
	}
	issues = append(issues, s.admit(u)...)
	issues = append(issues, listenerSetFilterProtocols(spec.kind, u)...)
	if len(issues) > 0 {
		return nil, issues
	}

	if v.schemaVersion != spec.version {
		hub, err := l.crds.schema(spec.crd, spec.version)
		if err != nil {
			return nil, []issue{{msg: fmt.Sprintf("internal error: loading the %s schema: %v", spec.kind, err)}}
		}
		u["apiVersion"] = spec.apiVersion()
		hub.quick.prune(u, hub.structural)
		hub.quick.applyDefaults(u, hub.structural)
		delete(u, "status")
	}
	u["apiVersion"], u["kind"] = spec.apiVersion(), spec.kind
	obj, err := decodeTyped(u, spec.newObject)
	if err != nil {
		return nil, []issue{{msg: fmt.Sprintf("internal error: converting to the %s type: %v", spec.kind, err)}}
	}
	return obj, nil
}

// admit runs the steps of a create on u after pruning unknown fields and
// nulls (quickSchema.pruneWithNulls): structural defaulting, status
// dropped and generation set, ObjectMeta, OpenAPI schema and list-type
// validation, then CEL rules.
func (s *crdSchema) admit(u map[string]any) []issue {
	// Defaulting and the quick checks are one walk (defaultAndCheck); the
	// root's own defaults are filled in before status is dropped, as the
	// apiserver defaults status and then drops it.
	s.quick.applyOwnDefaults(u, s.structural)
	delete(u, "status")
	u["metadata"].(map[string]any)["generation"] = int64(1)
	quick := s.quick.defaultAndCheck(u, s.structural, false) // the OpenAPI schema and list types

	var errs field.ErrorList
	if !quick {
		errs = append(errs, apivalidation.ValidateCustomResource(nil, u, s.validator)...)
	}
	if s.hasEmbedded {
		errs = append(errs, schemaobjectmeta.Validate(context.Background(), nil, u, s.structural, false)...)
	}
	if !quick {
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, u)...)
	}
	var issues []issue
	if s.cel != nil {
		if hasBlockingErr(errs) {
			issues = append(issues, issue{msg: celSkipped})
		} else {
			path := celPaths.Get().(*celPath)
			errs = s.cel.validate(path, u, errs)
			path.steps = path.steps[:0]
			celPaths.Put(path)
		}
	}
	return append(issues, nameDuplicateListeners(u, fieldIssues(errs))...)
}

// celSkipped is the apiserver's note when CEL rules were not evaluated.
const celSkipped = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"

// hasBlockingErr mirrors the apiserver: CEL rules are not evaluated when the
// object has errors of kinds that make rule evaluation unreliable.
func hasBlockingErr(errs field.ErrorList) bool {
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return true
		}
	}
	return false
}
