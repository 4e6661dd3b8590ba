package project

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

// crdBundle resolves --crds (flag) or, without it, gwdev.yaml's crds: to
// the bundle to judge manifests against (nil: the newest experimental
// CRDs). A name of an embedded bundle wins over a file of that name.
func crdBundle(flag string, proj projectOptions) (*watch.CRDBundle, error) {
	v, where := flag, "--crds"
	if v == "" {
		v, where = proj.crds, proj.crdsWhere+": crds"
	}
	if v == "" {
		return nil, nil
	}
	if slices.Contains(watch.CRDBundleNames(), v) {
		return watch.EmbeddedCRDBundle(v)
	}
	data, err := os.ReadFile(v)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %q is neither an embedded bundle (%s) nor a file", where, v, strings.Join(watch.CRDBundleNames(), ", "))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	b, err := watch.ReadCRDBundle(v, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return b, nil
}

// loaderCRDsName names the bundle a loader judges against, as --crds
// takes it.
func loaderCRDsName(l *watch.Loader) string {
	if b := l.CRDs(); b != nil {
		return b.Name
	}
	return watch.DefaultCRDBundleName()
}

// addChannelNotes adds the loader's channel notes (objects an older or
// standard-channel cluster would not take; only without --crds) to the
// result's findings as notes (severity info: check --strict does not fail
// on them), after the engine's own.
func addChannelNotes(res *engine.Result, lr *watch.LoadResult) {
	for _, n := range lr.Notes {
		res.Findings = append(res.Findings, engine.Finding{Severity: engine.SeverityInfo, Object: n.Object,
			Source: engine.Source{File: n.File, Line: n.Line}, Message: n.Message})
	}
}
