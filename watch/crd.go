package watch

import (
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apivalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
)

// crdFS holds the Gateway API CRDs (experimental channel) copied from the
// sigs.k8s.io/gateway-api module by `go generate`, in the compact form
// crdgen writes next to each YAML file: a JSON object holding the
// openAPIV3Schema of each served version, by version name, without
// descriptions. encoding/json decodes one version of it about ten times
// faster than sigs.k8s.io/yaml decodes the whole YAML.
// TestEmbeddedCRDsMatchYAML keeps the two in step.
//
//go:embed crds/*.json
var crdFS embed.FS

// embeddedCRDPath is where crdFS holds the compact form of the CRD file
// name (the YAML file name, as in kindSpec.crd).
func embeddedCRDPath(name string) string {
	return "crds/" + strings.TrimSuffix(name, ".yaml") + ".json"
}

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

// crdFile is one embedded CRD, split into versions on first use.
type crdFile struct {
	name string

	once     sync.Once
	versions map[string]*crdVersion
	err      error
}

// crdVersion is one version of a CRD, decoded and compiled on first use.
type crdVersion struct {
	file string          // CRD file name, for errors
	raw  json.RawMessage // the version's openAPIV3Schema

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
	sharedCRDsMu sync.Mutex
	sharedCRDs   *crdSet // nil: none made yet, or released
)

// processCRDs returns the process-wide set, so that every Loader shares the
// compiled validators.
func processCRDs() *crdSet {
	sharedCRDsMu.Lock()
	defer sharedCRDsMu.Unlock()
	if sharedCRDs == nil {
		s := &crdSet{files: map[string]*crdFile{}}
		for _, k := range allKinds {
			if k.crd != "" {
				s.files[k.crd] = &crdFile{name: k.crd}
			}
		}
		sharedCRDs = s
	}
	return sharedCRDs
}

// ReleaseValidators lets go of the process-wide compiled validators, for a
// process that will load no more (gwdev check, after its one load: 6 MB
// for the Gateway and HTTPRoute CRDs, held otherwise while the result is
// computed), and of the decoded embedded CRD bundles (1.6 MB;
// releaseEmbeddedBundles). Loaders made before keep theirs; the next
// NewLoader compiles them again.
func ReleaseValidators() {
	sharedCRDsMu.Lock()
	sharedCRDs = nil
	sharedCRDsMu.Unlock()
	releaseEmbeddedBundles()
}

// ReleaseValidators is the package's ReleaseValidators and lets go of l's
// own compiled validators too, which l keeps otherwise for as long as it
// lives (gwdev check's project holds its loader while it translates: 7 MB
// for 10,000 HTTPRoutes). If l loads again it compiles them again. Not to
// be called while l loads or watches.
func (l *Loader) ReleaseValidators() {
	ReleaseValidators()
	l.crds = processCRDs()
}

// check verifies that every CRD file is embedded (cheap; no decoding).
func (s *crdSet) check() error {
	for name := range s.files {
		if _, err := crdFS.Open(embeddedCRDPath(name)); err != nil {
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
	data, err := crdFS.ReadFile(embeddedCRDPath(f.name))
	if err != nil {
		f.err = fmt.Errorf("reading embedded CRD %s: %w", f.name, err)
		return
	}
	var schemas map[string]json.RawMessage
	if err := json.Unmarshal(data, &schemas); err != nil {
		f.err = fmt.Errorf("decoding embedded CRD %s: %w", f.name, err)
		return
	}
	f.versions = make(map[string]*crdVersion, len(schemas))
	for name, raw := range schemas {
		f.versions[name] = &crdVersion{file: f.name, raw: raw}
	}
}

func (v *crdVersion) compile() {
	var props apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(v.raw, &props); err != nil {
		v.err = fmt.Errorf("decoding embedded CRD %s: %w", v.file, err)
		return
	}
	v.raw = nil // no longer needed
	var internal apiextensionsinternal.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&props, &internal, nil); err != nil {
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
