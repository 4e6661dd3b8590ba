package watch

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/engine"
)

// bundleFS holds the CRDs of every Gateway API release gwdev can check
// against (--crds v1.5.1-standard), one gzip-compressed JSON file per
// release and channel, written by `go generate` (internal/crdgen -bundles)
// from the released modules: each CRD's group, kind, plural, scope and
// versions (served, storage, the schema without descriptions).
//
//go:embed crdbundles/*.json.gz
var bundleFS embed.FS

// CRDBundle is the set of Gateway API CRDs a cluster has installed: one of
// the embedded releases and channels, or the CRDs read from a cluster
// (`kubectl get crd -o yaml`). A Loader made with NewLoaderFor judges every
// Gateway API object as that cluster's API server would.
type CRDBundle struct {
	// Name is "v1.5.1-standard" for an embedded bundle, the file name for
	// one read from a file.
	Name string
	// Release ("v1.5.1") and Channel ("standard" or "experimental") of an
	// embedded bundle; "" for a file.
	Release, Channel string

	// crds are the bundle's CRDs by group and kind.
	crds map[groupKind]*bundleCRD
	// set compiles the bundle's schemas, keyed like kindSpec.crd.
	set *crdSet
	// profiles, for a bundle read from a file, are the served versions of
	// each implementation profile kind whose CRD the file holds (by group
	// and kind); nil for an embedded bundle, which says nothing about them.
	profiles map[groupKind][]string
}

// bundleCRD is one CRD of a bundle.
type bundleCRD struct {
	group, kind, plural string
	// file is the CRD's key in the bundle's crdSet ("group_plural.yaml").
	file string
	// served are the versions the CRD serves.
	served []string
	// schemas are the served versions' openAPIV3Schema, undecoded.
	schemas map[string]json.RawMessage

	treesOnce sync.Once
	trees     map[string]*fieldNode
}

// serves reports whether the CRD serves version.
func (c *bundleCRD) serves(version string) bool { return slices.Contains(c.served, version) }

// tree returns the field tree of a served version (nil: none).
func (c *bundleCRD) tree(version string) *fieldNode {
	c.treesOnce.Do(func() {
		c.trees = map[string]*fieldNode{}
		for v, raw := range c.schemas {
			var n fieldNode
			if json.Unmarshal(raw, &n) == nil {
				n.prepare()
				c.trees[v] = &n
			}
		}
	})
	return c.trees[version]
}

// bundleJSON is the embedded form (internal/crdgen writes it).
type bundleJSON struct {
	Release string `json:"release"`
	Channel string `json:"channel"`
	CRDs    []struct {
		Group    string `json:"group"`
		Kind     string `json:"kind"`
		Plural   string `json:"plural"`
		Versions []struct {
			Name   string          `json:"name"`
			Served bool            `json:"served"`
			Schema json.RawMessage `json:"schema"`
		} `json:"versions"`
	} `json:"crds"`
}

// CRDBundleNames lists the embedded bundles, oldest release first, the
// standard channel before the experimental one.
func CRDBundleNames() []string {
	entries, err := bundleFS.ReadDir("crdbundles")
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".json.gz"))
	}
	slices.SortFunc(names, compareBundleNames)
	return names
}

// compareBundleNames orders "v1.10.0-standard" after "v1.9.1-experimental".
func compareBundleNames(a, b string) int {
	ra, ca, _ := strings.Cut(a, "-")
	rb, cb, _ := strings.Cut(b, "-")
	return cmp.Or(CompareReleases(ra, rb), cmp.Compare(channelRank(ca), channelRank(cb)))
}

func channelRank(ch string) int {
	if ch == "standard" {
		return 0
	}
	return 1
}

// CompareReleases compares Gateway API releases such as "v1.5.1" and
// "v1.10.0" numerically, like cmp.Compare.
func CompareReleases(a, b string) int {
	pa := strings.Split(strings.TrimPrefix(a, "v"), ".")
	pb := strings.Split(strings.TrimPrefix(b, "v"), ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		var na, nb int
		fmt.Sscan(pa[i], &na)
		fmt.Sscan(pb[i], &nb)
		if c := cmp.Compare(na, nb); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(pa), len(pb))
}

var (
	embeddedBundlesMu sync.Mutex
	embeddedBundles   = map[string]*CRDBundle{}
)

// EmbeddedCRDBundle returns the embedded bundle named name
// ("v1.5.1-standard"). Bundles are decoded once per process.
func EmbeddedCRDBundle(name string) (*CRDBundle, error) {
	embeddedBundlesMu.Lock()
	defer embeddedBundlesMu.Unlock()
	if b := embeddedBundles[name]; b != nil {
		return b, nil
	}
	data, err := bundleFS.ReadFile("crdbundles/" + name + ".json.gz")
	if err != nil {
		return nil, fmt.Errorf("no embedded CRD bundle %q (gwdev has %s)", name, strings.Join(CRDBundleNames(), ", "))
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading CRD bundle %s: %w", name, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("reading CRD bundle %s: %w", name, err)
	}
	var bj bundleJSON
	if err := json.Unmarshal(raw, &bj); err != nil {
		return nil, fmt.Errorf("decoding CRD bundle %s: %w", name, err)
	}
	b := &CRDBundle{Name: name, Release: bj.Release, Channel: bj.Channel}
	for _, c := range bj.CRDs {
		bc := &bundleCRD{group: c.Group, kind: c.Kind, plural: c.Plural, schemas: map[string]json.RawMessage{}}
		for _, v := range c.Versions {
			if v.Served && len(v.Schema) > 0 {
				bc.served = append(bc.served, v.Name)
				bc.schemas[v.Name] = v.Schema
			}
		}
		b.add(bc)
	}
	embeddedBundles[name] = b
	return b, nil
}

// add puts a CRD into the bundle.
func (b *CRDBundle) add(c *bundleCRD) {
	if b.crds == nil {
		b.crds = map[groupKind]*bundleCRD{}
		b.set = &crdSet{files: map[string]*crdFile{}}
	}
	c.file = c.group + "_" + c.plural + ".yaml"
	b.crds[groupKind{c.group, c.kind}] = c
	f := &crdFile{name: c.file, versions: map[string]*crdVersion{}}
	f.once.Do(func() {}) // the versions are here already
	for v, raw := range c.schemas {
		f.versions[v] = &crdVersion{file: c.file, raw: raw}
	}
	b.set.files[c.file] = f
}

// crd returns the bundle's CRD of group and kind (nil: not installed).
func (b *CRDBundle) crd(group, kind string) *bundleCRD { return b.crds[groupKind{group, kind}] }

// Kinds lists the bundle's kinds with the versions each serves, as
// "HTTPRoute gateway.networking.k8s.io v1, v1beta1", sorted by group and
// kind (gwdev crds list).
func (b *CRDBundle) Kinds() []string {
	var out []string
	for _, c := range b.crds {
		out = append(out, fmt.Sprintf("%s %s %s", c.kind, c.group, strings.Join(c.served, ", ")))
	}
	slices.Sort(out)
	return out
}

// ReadCRDBundle reads the CRDs a cluster has from the output of
// `kubectl get crd -o yaml` (a v1 List, a CustomResourceDefinitionList or
// CRD documents separated by ---), named name in messages. CRDs of groups
// other than Gateway API's and gwdev's implementation profiles' are
// ignored; the file must hold at least one Gateway API CRD.
func ReadCRDBundle(name string, data []byte) (*CRDBundle, error) {
	b := &CRDBundle{Name: path.Base(name), profiles: map[groupKind][]string{}}
	for i, doc := range splitYAMLDocuments(data) {
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		if bytes.Equal(bytes.TrimSpace(j), []byte("null")) {
			continue
		}
		var head struct {
			Kind  string            `json:"kind"`
			Items []json.RawMessage `json:"items"`
		}
		if err := json.Unmarshal(j, &head); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
		}
		items := []json.RawMessage{j}
		if strings.HasSuffix(head.Kind, "List") {
			items = head.Items
		}
		for _, it := range items {
			if err := b.addClusterCRD(it); err != nil {
				return nil, fmt.Errorf("%s: document %d: %w", name, i+1, err)
			}
		}
	}
	if len(b.crds) == 0 {
		return nil, fmt.Errorf("%s holds no Gateway API CustomResourceDefinition (want the output of kubectl get crd -o yaml)", name)
	}
	return b, nil
}

// clusterCRD is the part of a CustomResourceDefinition gwdev reads.
type clusterCRD struct {
	Kind string `json:"kind"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Kind   string `json:"kind"`
			Plural string `json:"plural"`
		} `json:"names"`
		Versions []struct {
			Name   string `json:"name"`
			Served bool   `json:"served"`
			Schema struct {
				OpenAPIV3Schema json.RawMessage `json:"openAPIV3Schema"`
			} `json:"schema"`
		} `json:"versions"`
	} `json:"spec"`
}

func (b *CRDBundle) addClusterCRD(raw json.RawMessage) error {
	var c clusterCRD
	if err := json.Unmarshal(raw, &c); err != nil {
		return err
	}
	if c.Kind != "CustomResourceDefinition" {
		return nil
	}
	gk := groupKind{c.Spec.Group, c.Spec.Names.Kind}
	switch {
	case c.Spec.Group == groupGateway || c.Spec.Group == engine.ExperimentalGroup:
		bc := &bundleCRD{group: gk.group, kind: gk.kind, plural: c.Spec.Names.Plural, schemas: map[string]json.RawMessage{}}
		for _, v := range c.Spec.Versions {
			if v.Served && len(v.Schema.OpenAPIV3Schema) > 0 {
				bc.served = append(bc.served, v.Name)
				bc.schemas[v.Name] = v.Schema.OpenAPIV3Schema
			}
		}
		b.add(bc)
	case policyKindOf(gk.kind) != nil && gk.group == policyKindOf(gk.kind).spec.group:
		for _, v := range c.Spec.Versions {
			if v.Served {
				b.profiles[gk] = append(b.profiles[gk], v.Name)
			}
		}
	}
	return nil
}

// splitYAMLDocuments splits a YAML stream at lines that are "---".
func splitYAMLDocuments(data []byte) [][]byte {
	var docs [][]byte
	start := 0
	for i := 0; i <= len(data); {
		end := bytes.IndexByte(data[i:], '\n')
		line := data[i:]
		next := len(data) + 1
		if end >= 0 {
			line, next = data[i:i+end], i+end+1
		}
		if t := bytes.TrimRight(line, " \r"); bytes.Equal(t, []byte("---")) || bytes.HasPrefix(t, []byte("--- ")) {
			docs = append(docs, data[start:i])
			start = min(next, len(data))
		}
		i = next
	}
	return append(docs, data[start:])
}
