package watch

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/engine"
)

// API groups the loader names (the others come from engine's registry).
const (
	groupGateway = "gateway.networking.k8s.io"
	groupCore    = ""
)

// kindSpec describes one kind as gwdev stores it in the Snapshot.
type kindSpec struct {
	// kind is the Kind in the Snapshot and in engine.ObjectKey.
	kind string
	// group and version are the apiVersion objects are converted to.
	group, version string
	// namespaced is false for cluster-scoped kinds.
	namespaced bool
	// crd is the embedded CRD file validating this kind ("" for core kinds).
	crd string
	// newObject returns an empty typed object of this kind.
	newObject func() metav1.Object
	// entry is the kind's entry in engine's registry (nil: an
	// implementation policy kind).
	entry *engine.Kind
	// storedAPIVersion is apiVersion's answer, made once (withAPIVersion):
	// every object loaded shares it (10,000 HTTPRoutes held 0.3 MB of
	// copies of it).
	storedAPIVersion string
}

// withAPIVersion sets k's storedAPIVersion from its group and version and
// returns k.
func (k *kindSpec) withAPIVersion() *kindSpec {
	k.storedAPIVersion = k.version
	if k.group != "" {
		k.storedAPIVersion = k.group + "/" + k.version
	}
	return k
}

// apiVersion is the apiVersion objects of this kind are stored with.
func (k *kindSpec) apiVersion() string {
	if k.storedAPIVersion == "" {
		return (&kindSpec{group: k.group, version: k.version}).withAPIVersion().storedAPIVersion
	}
	return k.storedAPIVersion
}

// allKinds lists every kind of engine's registry as the loader uses it, in
// registry order (implementation policies are in policies.go).
// crdServedVersions are the versions each Gateway API CRD serves (the
// experimental channel of the embedded CRDs; TestServedVersionsMatchCRDs
// keeps engine's registry honest).
var allKinds, crdServedVersions = buildKindSpecs()

// Kinds the loader refers to by name.
var (
	kindHTTPRoute = kindNamed("HTTPRoute")
	kindService   = kindNamed("Service")
	kindNamespace = kindNamed("Namespace")
)

// buildKindSpecs derives a kindSpec from every entry of engine's registry;
// Gateway API kinds are validated by their embedded CRD (Kind.CRD).
func buildKindSpecs() ([]*kindSpec, map[*kindSpec][]string) {
	var all []*kindSpec
	crds := map[*kindSpec][]string{}
	for _, k := range engine.Kinds() {
		if k.OwnKinds {
			continue
		}
		spec := (&kindSpec{kind: k.Kind, group: k.Group, version: k.Version, namespaced: k.Namespaced, newObject: k.New, entry: k}).withAPIVersion()
		if spec.crd = k.CRD(); spec.crd != "" {
			crds[spec] = k.Versions()
		}
		all = append(all, spec)
	}
	return all, crds
}

// kindNamed returns the kindSpec of kind (nil: none).
func kindNamed(kind string) *kindSpec {
	for _, k := range allKinds {
		if k.kind == kind {
			return k
		}
	}
	return nil
}

// gvk is a parsed apiVersion plus kind, as written in a manifest.
type gvk struct {
	group, version, kind string
}

// parseGVK splits apiVersion into group and version ("v1" is the core group).
func parseGVK(apiVersion, kind string) gvk {
	if i := strings.LastIndexByte(apiVersion, '/'); i >= 0 {
		return gvk{group: apiVersion[:i], version: apiVersion[i+1:], kind: kind}
	}
	return gvk{version: apiVersion, kind: kind}
}

// servedVersion is one apiVersion/kind gwdev accepts.
type servedVersion struct {
	// spec is the kind the object is converted to.
	spec *kindSpec
	// schemaVersion is the CRD version whose schema validates the object
	// (CRD kinds only).
	schemaVersion string
	// asKind and asAPIVersion, when set, rewrite the object's kind and
	// apiVersion before validation (XListenerSet is validated as a v1
	// ListenerSet).
	asKind, asAPIVersion string
}

// converted reports whether objects of this version are stored under
// another apiVersion or kind.
func (v *servedVersion) converted(g gvk) bool {
	return g.group != v.spec.group || g.version != v.spec.version || g.kind != v.spec.kind
}

// groupVersions lists the versions of each group gwdev knows, known or not
// for a given kind: an unknown version of a known group is a Problem, not a
// Skipped object. buildRegistry fills it with every version served in the
// group.
var groupVersions = map[string]map[string]bool{}

// registry maps every accepted group/version/kind to how it is loaded.
var registry = buildRegistry()

// kindsByGroup lists the kinds of each group gwdev knows.
var kindsByGroup = map[string]map[string]bool{}

func buildRegistry() map[gvk]*servedVersion {
	r := map[gvk]*servedVersion{}
	add := func(g gvk, v *servedVersion) {
		r[g] = v
		if kindsByGroup[g.group] == nil {
			kindsByGroup[g.group] = map[string]bool{}
		}
		kindsByGroup[g.group][g.kind] = true
		if groupVersions[g.group] == nil {
			groupVersions[g.group] = map[string]bool{}
		}
		groupVersions[g.group][g.version] = true
	}
	for spec, versions := range crdServedVersions {
		for _, v := range versions {
			add(gvk{spec.group, v, spec.kind}, &servedVersion{spec: spec, schemaVersion: v})
		}
	}
	for _, spec := range allKinds {
		if spec.crd == "" {
			add(gvk{spec.group, spec.version, spec.kind}, &servedVersion{spec: spec})
		}
		for _, a := range spec.entry.Aliases {
			add(gvk{a.Group, a.Version, a.Kind}, &servedVersion{
				spec: spec, schemaVersion: spec.version,
				asKind: spec.kind, asAPIVersion: spec.apiVersion(),
			})
		}
	}
	for _, pk := range implementationPolicyKinds {
		add(gvk{pk.spec.group, pk.spec.version, pk.spec.kind}, &servedVersion{spec: pk.spec})
	}
	return r
}

// lookupResult says what to do with an object of a given group/version/kind.
type lookupResult int

const (
	lookupServed         lookupResult = iota // load it
	lookupUnknownKind                        // list it in Skipped
	lookupUnknownVersion                     // a Problem: known kind or group, unknown version
)

// lookup finds how to load g.
func lookup(g gvk) (*servedVersion, lookupResult) {
	if v, ok := registry[g]; ok {
		return v, lookupServed
	}
	versions, knownGroup := groupVersions[g.group]
	if !knownGroup {
		return nil, lookupUnknownKind
	}
	if kindsByGroup[g.group][g.kind] {
		return nil, lookupUnknownVersion
	}
	if versions[g.version] {
		return nil, lookupUnknownKind
	}
	return nil, lookupUnknownVersion
}
