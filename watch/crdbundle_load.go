package watch

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// This file judges objects against a CRDBundle (a Loader made with
// NewLoaderFor): what that cluster's API server serves, prunes, defaults
// and validates.

// NewLoaderFor returns a Loader that judges Gateway API objects against b,
// as the API server of a cluster with b's CRDs installed would: a kind or
// version b does not serve is a problem, as is a field b's schema does not
// have (the object is still loaded without it, as the cluster stores it
// when validation is off), and b's schema and CEL rules validate. A nil b
// is NewLoader: gwdev's own CRDs (DefaultCRDBundleName), with a note for
// every object an older or standard-channel cluster would not take.
func NewLoaderFor(b *CRDBundle) (*Loader, error) {
	l, err := NewLoader()
	if err != nil || b == nil {
		return l, err
	}
	l.bundle = b
	return l, nil
}

// CRDs returns the bundle the loader judges against (nil: gwdev's own
// CRDs, DefaultCRDBundleName).
func (l *Loader) CRDs() *CRDBundle { return l.bundle }

// gwdevRelease is the Gateway API release of gwdev's types and default
// CRDs (watch/crds).
const gwdevRelease = "v1.7.0"

// DefaultCRDBundleName names the bundle a Loader without one judges
// against: the experimental channel of the release gwdev implements
// (watch/crds is that bundle; TestDefaultCRDsAreANamedBundle).
func DefaultCRDBundleName() string { return gwdevRelease + "-experimental" }

// strictUnknownField is what a cluster does with a field its CRD lacks.
const strictUnknownField = "rejected by kubectl's strict field validation; dropped without a word when validation is off"

// notServed returns the problem for an object of g that b does not serve
// ("" when it serves it). v is how gwdev loads g.
func (b *CRDBundle) notServed(g gvk, v *servedVersion) string {
	if v.spec.crd == "" && v.asKind == "" {
		if b.profiles == nil || policyKindOf(g.kind) == nil {
			return "" // core kinds; profile kinds unless the file lists CRDs
		}
		for _, ver := range b.profiles[groupKind{g.group, g.kind}] {
			if ver == g.version {
				return ""
			}
		}
		return fmt.Sprintf("no matches for kind %q in version %q (%s does not serve it)", g.kind, parseGVKString(g), b.Name)
	}
	if c := b.crd(g.group, g.kind); c != nil && c.serves(g.version) {
		return ""
	}
	where := whereBundles(func(o *CRDBundle) bool {
		c := o.crd(g.group, g.kind)
		return c != nil && c.serves(g.version)
	})
	return fmt.Sprintf("no matches for kind %q in version %q (%s does not serve it; it is served %s)", g.kind, parseGVKString(g), b.Name, where)
}

// loadBundleObject is loadCRDObject against the bundle's CRD of g: unknown
// fields are problems that do not stop the object (it is loaded pruned);
// anything else the bundle's schema or rules refuse does.
func (l *Loader) loadBundleObject(u map[string]any, v *servedVersion, g gvk) (metav1.Object, []issue) {
	spec := v.spec
	_, issues := prepareMetadata(u, spec)
	c := l.bundle.crd(g.group, g.kind)
	s, err := l.bundle.set.schema(c.file, g.version)
	if err != nil {
		return nil, append(issues, issue{msg: fmt.Sprintf("internal error: loading the %s schema of %s: %v", g.kind, l.bundle.Name, err)})
	}
	var pruned []issue
	for _, path := range s.quick.pruneWithNulls(u, s.structural) {
		pruned = append(pruned, issue{field: path, msg: l.bundle.unknownField(g, path), pruned: true, kind: ProblemUnknownField})
	}
	issues = append(issues, s.admit(u)...)
	if len(issues) > 0 {
		return nil, append(pruned, issues...)
	}
	// Read as gwdev's stored version, like loadCRDObject, without the
	// hub's defaults (they are not this cluster's). A field the bundle has
	// and gwdev's types lack is said, never dropped silently.
	hub, err := l.crds.schema(spec.crd, spec.version)
	if err != nil {
		return nil, []issue{{msg: fmt.Sprintf("internal error: loading the %s schema: %v", spec.kind, err)}}
	}
	u["apiVersion"], u["kind"] = spec.apiVersion(), spec.kind
	for _, path := range hub.quick.prune(u, hub.structural) {
		pruned = append(pruned, issue{field: path, pruned: true, kind: ProblemUnknownField, msg: fmt.Sprintf(
			"field %q is in %s but not in gwdev's Gateway API types (%s): gwdev cannot serve it as that cluster's controller would, and loads the object without it",
			path, l.bundle.Name, gwdevRelease)})
	}
	delete(u, "status")
	obj, err := decodeTyped(u, spec.newObject)
	if err != nil {
		return nil, []issue{{msg: fmt.Sprintf("internal error: converting to the %s type: %v", spec.kind, err)}}
	}
	return obj, pruned
}

// unknownField is the message for a field of an object of g that b's
// schema does not have.
func (b *CRDBundle) unknownField(g gvk, path string) string {
	where := fieldWhere(g, path)
	if where == "" {
		where = "in no embedded bundle"
	}
	return fmt.Sprintf("unknown field %q in %s: %s; the field is %s", path, b.Name, strictUnknownField, where)
}

// fieldWhere says which embedded bundles have the field at path of an
// object of g (whereBundles), "" when none does (a typo, most likely).
func fieldWhere(g gvk, path string) string {
	found := false
	where := whereBundles(func(o *CRDBundle) bool {
		c := o.crd(g.group, g.kind)
		has := c != nil && c.serves(g.version) && c.tree(g.version).hasPath(path)
		found = found || has
		return has
	})
	if !found {
		return ""
	}
	return where
}

// misfit returns why b's API server would not take an object of g as
// written ("" when it would), looking at served versions, unknown fields
// and enums only.
func (b *CRDBundle) misfit(g gvk, u map[string]any) string {
	c := b.crd(g.group, g.kind)
	if c == nil || !c.serves(g.version) {
		return fmt.Sprintf("%s does not serve %s %s", b.Name, parseGVKString(g), g.kind)
	}
	if why := c.tree(g.version).misfit(u); why != "" {
		return b.Name + " " + why
	}
	return ""
}

var (
	standardBundlesMu sync.Mutex
	// standardBundles holds the embedded standard-channel bundles' names
	// and each one once decoded (nil: none looked up yet, or released by
	// releaseEmbeddedBundles).
	standardBundles atomic.Pointer[standardSet]
)

// standardSet is the embedded standard-channel bundles, oldest first,
// each decoded on its first use: channelNote looks at every object with
// the oldest and at the newer ones only for an object the oldest does not
// take, and decoding all four took 13 ms of a check of one route (a tenth
// of it; issue 42, session 19).
type standardSet struct {
	names   []string
	bundles []atomic.Pointer[CRDBundle]
}

// standardBundleSet returns the embedded standard-channel bundles' set.
func standardBundleSet() *standardSet {
	if p := standardBundles.Load(); p != nil {
		return p
	}
	standardBundlesMu.Lock()
	defer standardBundlesMu.Unlock()
	if p := standardBundles.Load(); p != nil {
		return p
	}
	set := &standardSet{}
	for _, name := range CRDBundleNames() {
		if strings.HasSuffix(name, "-standard") {
			set.names = append(set.names, name)
		}
	}
	set.bundles = make([]atomic.Pointer[CRDBundle], len(set.names))
	standardBundles.Store(set)
	return set
}

// bundle returns the set's i-th bundle, decoded (nil: it does not decode,
// or is not of the standard channel).
func (s *standardSet) bundle(i int) *CRDBundle {
	if b := s.bundles[i].Load(); b != nil {
		return b
	}
	b, err := EmbeddedCRDBundle(s.names[i])
	if err != nil || b.Channel != "standard" {
		return nil
	}
	s.bundles[i].Store(b)
	return b
}

// embeddedStandardBundles returns the embedded standard-channel bundles,
// oldest first, decoded once until releaseEmbeddedBundles.
func embeddedStandardBundles() []*CRDBundle { return standardBundleSet().all() }

// all returns the set's bundles that decode, oldest first.
func (s *standardSet) all() []*CRDBundle {
	var bs []*CRDBundle
	for i := range s.names {
		if b := s.bundle(i); b != nil {
			bs = append(bs, b)
		}
	}
	return bs
}

// releaseEmbeddedBundles lets go of the decoded embedded bundles (the
// loader decodes the standard ones for every load's channel notes: 1.6 MB
// held while check translates); the next use decodes them again. Who holds
// a bundle keeps it.
func releaseEmbeddedBundles() {
	standardBundlesMu.Lock()
	standardBundles.Store(nil)
	standardBundlesMu.Unlock()
	embeddedBundlesMu.Lock()
	clear(embeddedBundles)
	embeddedBundlesMu.Unlock()
}

// channelNote says what an object of g as written (u, not modified) needs
// beyond the oldest embedded standard bundle: "" when that takes it,
// "needs v1.6+ standard: …" when a newer standard release does, or
// "experimental channel only: …". Served versions, unknown fields and
// enums are considered, not CEL rules.
func channelNote(g gvk, u map[string]any) string {
	set := standardBundleSet()
	if len(set.names) == 0 {
		return ""
	}
	oldest := set.bundle(0)
	if oldest == nil {
		return ""
	}
	why := oldest.misfit(g, u)
	if why == "" {
		return ""
	}
	std := set.all() // the same set: std[0] is oldest, whatever a release does meanwhile
	var fits []string
	suffix := true // the bundles that take it are the newest ones
	for _, b := range std[1:] {
		if w := b.misfit(g, u); w != "" {
			why = w // the newest release that does not take it
			suffix = len(fits) == 0
			continue
		}
		fits = append(fits, b.Name)
	}
	switch {
	case len(fits) == 0:
		return "experimental channel only: " + why
	case suffix:
		first := std[len(std)-len(fits)]
		return fmt.Sprintf("needs %s+ standard: %s", minorOf(first.Release), why)
	}
	return fmt.Sprintf("only %s take it: %s", strings.Join(fits, ", "), why)
}
