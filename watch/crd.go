package watch

import (
	"embed"
	"fmt"
	"sync"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"sigs.k8s.io/yaml"
)

// crdFS holds the Gateway API CRDs (experimental channel) copied from the
// sigs.k8s.io/gateway-api module by `go generate`.
//
//go:embed crds/*.yaml
var crdFS embed.FS

// crdSchema is one version of one CRD, compiled the way the apiserver
// compiles it when the CRD is installed.
type crdSchema struct {
	// structural drives pruning, defaulting and list-type checks.
	structural *structuralschema.Structural
	// validator checks the OpenAPI schema (types, required, patterns, enums,
	// bounds, formats).
	validator apivalidation.SchemaValidator
	// quick checks the OpenAPI schema fast, deferring to validator when
	// in doubt.
	quick *quickSchema
	// hasEmbedded is true when the schema has embedded resources (checked
	// by objectmeta.Validate).
	hasEmbedded bool
	// cel evaluates x-kubernetes-validations; nil when there are none.
	cel *celNode
}

// crdFile is one embedded CRD, decoded on first use.
type crdFile struct {
	name string

	once     sync.Once
	versions map[string]*crdVersion
	err      error
}

// crdVersion is one version of a CRD, compiled on first use.
type crdVersion struct {
	props *apiextensionsv1.JSONSchemaProps

	once   sync.Once
	schema *crdSchema
	err    error
}

// crdSet holds every embedded CRD. Compilation happens lazily, once per CRD
// version per process, and is safe for concurrent use.
type crdSet struct {
	files map[string]*crdFile
}

var (
	sharedCRDsOnce sync.Once
	sharedCRDs     *crdSet
)

// processCRDs returns the process-wide set, so that every Loader shares the
// compiled validators.
func processCRDs() *crdSet {
	sharedCRDsOnce.Do(func() {
		s := &crdSet{files: map[string]*crdFile{}}
		for _, k := range allKinds {
			if k.crd != "" {
				s.files[k.crd] = &crdFile{name: k.crd}
			}
		}
		sharedCRDs = s
	})
	return sharedCRDs
}

// check verifies that every CRD file is embedded (cheap; no decoding).
func (s *crdSet) check() error {
	for name := range s.files {
		if _, err := crdFS.Open("crds/" + name); err != nil {
			return fmt.Errorf("embedded CRD %s is missing (run go generate ./watch): %w", name, err)
		}
	}
	return nil
}

// schema returns the compiled schema of one version of a CRD.
func (s *crdSet) schema(file, version string) (*crdSchema, error) {
	f, ok := s.files[file]
	if !ok {
		return nil, fmt.Errorf("no embedded CRD %s", file)
	}
	f.once.Do(f.decode)
	if f.err != nil {
		return nil, f.err
	}
	v, ok := f.versions[version]
	if !ok {
		return nil, fmt.Errorf("CRD %s has no version %s", file, version)
	}
	v.once.Do(v.compile)
	return v.schema, v.err
}

func (f *crdFile) decode() {
	data, err := crdFS.ReadFile("crds/" + f.name)
	if err != nil {
		f.err = fmt.Errorf("reading embedded CRD %s: %w", f.name, err)
		return
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		f.err = fmt.Errorf("decoding embedded CRD %s: %w", f.name, err)
		return
	}
	f.versions = map[string]*crdVersion{}
	for i := range crd.Spec.Versions {
		v := &crd.Spec.Versions[i]
		if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		f.versions[v.Name] = &crdVersion{props: v.Schema.OpenAPIV3Schema}
	}
}

func (v *crdVersion) compile() {
	var internal apiextensionsinternal.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.props, &internal, nil); err != nil {
		v.err = fmt.Errorf("converting schema: %w", err)
		return
	}
	structural, err := structuralschema.NewStructural(&internal)
	if err != nil {
		v.err = fmt.Errorf("building structural schema: %w", err)
		return
	}
	validator, _, err := apivalidation.NewSchemaValidator(&internal)
	if err != nil {
		v.err = fmt.Errorf("building schema validator: %w", err)
		return
	}
	v.schema = &crdSchema{
		structural:  structural,
		validator:   validator,
		quick:       newQuickSchema(structural),
		hasEmbedded: hasEmbeddedResource(structural),
		cel:         compileCEL(structural),
	}
	v.props = nil // no longer needed
}

// hasEmbeddedResource reports whether any node below the root is an
// x-kubernetes-embedded-resource.
func hasEmbeddedResource(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if s.Items != nil && (s.Items.XEmbeddedResource || hasEmbeddedResource(s.Items)) {
		return true
	}
	for k := range s.Properties {
		p := s.Properties[k]
		if p.XEmbeddedResource || hasEmbeddedResource(&p) {
			return true
		}
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Structural != nil {
		return ap.Structural.XEmbeddedResource || hasEmbeddedResource(ap.Structural)
	}
	return false
}
