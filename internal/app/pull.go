package app

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/watch"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"
)

// PulledFile is one file pull writes: a name it made itself, relative to
// DIR, and its content.
type PulledFile struct {
	// Name is "NAMESPACE/RESOURCE.yaml" ("cluster/…" for cluster-scoped
	// kinds), "RESOURCE-N.yaml" for the Nth part of a split one.
	Name string
	Data []byte
	// Objects counts the objects in Data.
	Objects int
}

// PulledFiles groups the objects read into one file per namespace and
// kind, named after the kind each was asked for (ClusterObjects.Listed),
// split where a file would be over the loader's watch.MaxFileSize.
func PulledFiles(objs *watch.ClusterObjects, header string) ([]PulledFile, error) {
	type group struct {
		kind *engine.Kind
		ns   string
	}
	groups := map[group][]*unstructured.Unstructured{}
	var order []group
	for i, u := range objs.Objects {
		g := group{kind: objs.Listed[i], ns: u.GetNamespace()}
		if groups[g] == nil {
			order = append(order, g)
		}
		groups[g] = append(groups[g], u)
	}
	var files []PulledFile
	for _, g := range order {
		parts, err := watch.ManifestFiles(groups[g], watch.MaxFileSize-len(header))
		if err != nil {
			return nil, err
		}
		for i, part := range parts {
			name, err := pullFileName(g.kind, g.ns, i+1)
			if err != nil {
				return nil, err
			}
			files = append(files, PulledFile{Name: name, Data: append([]byte(header), part.Data...), Objects: part.Objects})
		}
	}
	return files, nil
}

// pullFileName names the file of the objects of kind k (an entry of the
// kinds table) in a namespace, part ≥ 1 of them: always a path inside DIR,
// or an error.
func pullFileName(k *engine.Kind, namespace string, part int) (string, error) {
	if k == nil || !slices.Contains(engine.Kinds(), k) || !isLowerWord(k.Resource) {
		return "", fmt.Errorf("pulling an object of a kind outside gwdev's kinds table: refused")
	}
	folder := "cluster"
	switch {
	case k.Namespaced && len(validation.IsDNS1123Label(namespace)) > 0:
		return "", fmt.Errorf("pulling %s: namespace %q is not a valid namespace name: refused", k.Kind, namespace)
	case k.Namespaced:
		folder = namespace
	case namespace != "":
		return "", fmt.Errorf("pulling the cluster-scoped %s: it has namespace %q: refused", k.Kind, namespace)
	}
	base := k.Resource
	if part > 1 {
		base += "-" + strconv.Itoa(part)
	}
	name := folder + "/" + base + ".yaml"
	if !filepath.IsLocal(name) {
		return "", fmt.Errorf("pulling %s: %q is not a name inside the folder: refused", k.Kind, name)
	}
	return name, nil
}

// isLowerWord reports whether s is a plural resource name: lower-case
// letters only.
func isLowerWord(s string) bool {
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz") == ""
}

// refusedFile are the load problems that keep a whole file or document
// out: gwdev up would not serve what pull wrote.
var refusedFile = []watch.ProblemKind{watch.ProblemTooLarge, watch.ProblemBinary, watch.ProblemYAML, watch.ProblemHeader}

// CheckPulled loads each file as gwdev up DIR will: a file or document the
// loader refuses is an error naming it, and nothing is written; other
// problems are printed (the cluster took objects gwdev's CRDs judge).
func CheckPulled(out io.Writer, proj *project.Project, files []PulledFile) error {
	var refused []string
	for _, f := range files {
		for _, p := range proj.LoadBytes(f.Name, f.Data).Problems {
			if slices.Contains(refusedFile, p.Kind) {
				refused = append(refused, p.String())
				continue
			}
			fmt.Fprintf(out, "  ! %s\n", p.String())
		}
	}
	if len(refused) > 0 {
		return fmt.Errorf("nothing written: gwdev's loader would refuse what the cluster returned:\n  %s", strings.Join(refused, "\n  "))
	}
	return nil
}

// WritePulled writes the files into dir through an os.Root, so that no
// name, symlink or ".." takes a write outside it, and removes the parts
// of a split file an earlier pull wrote that this one did not.
func WritePulled(out io.Writer, dir string, files []PulledFile, perm os.FileMode) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	written := map[string]bool{}
	for _, f := range files {
		if err := root.MkdirAll(path.Dir(f.Name), 0o755); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, f.Name), err)
		}
		if err := root.WriteFile(f.Name, f.Data, perm); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, f.Name), err)
		}
		if err := root.Chmod(f.Name, perm); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, f.Name), err)
		}
		written[f.Name] = true
		fmt.Fprintf(out, "  + %s (%s)\n", filepath.Join(dir, f.Name), report.Plural(f.Objects, "object"))
	}
	for _, f := range files {
		base, ok := strings.CutSuffix(f.Name, ".yaml")
		if !ok || strings.Contains(path.Base(base), "-") {
			continue
		}
		for n := 2; ; n++ {
			stale := base + "-" + strconv.Itoa(n) + ".yaml"
			if written[stale] {
				continue
			}
			data, err := root.ReadFile(stale)
			if err != nil || !bytes.HasPrefix(data, []byte("# Pulled by gwdev pull ")) {
				break
			}
			if err := root.Remove(stale); err != nil {
				return fmt.Errorf("removing %s: %w", filepath.Join(dir, stale), err)
			}
			fmt.Fprintf(out, "  - %s (a part an earlier pull wrote)\n", filepath.Join(dir, stale))
		}
	}
	return nil
}
