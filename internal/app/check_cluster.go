package app

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
	"github.com/gwdev/gwdev/watch"
)

// ClusterCheck is what `gwdev check --cluster` found: the cluster's
// objects, how they loaded, and where the status its controllers wrote
// disagrees with the spec's.
type ClusterCheck struct {
	Objects    *watch.ClusterObjects
	Load       *watch.LoadResult
	Comparison *report.ClusterComparison
}

// CheckCluster reads the cluster's objects and the status its controllers
// wrote (opts), computes the spec's status from the same objects, read
// with flags, and compares the two. Secrets that listeners refer to are
// read to resolve certificates (in memory only; a Secret gwdev may not
// read is a note).
func CheckCluster(ctx context.Context, opts watch.ClusterOptions, flags project.Flags, now metav1.Time) (*ClusterCheck, error) {
	objs, err := watch.ReadCluster(ctx, opts)
	if err != nil {
		return nil, err
	}
	// In streams the loader takes (watch.MaxFileSize each), as pull writes
	// them.
	parts, err := watch.ManifestFiles(objs.Objects, watch.MaxFileSize)
	if err != nil {
		return nil, err
	}
	// --crds (a bundle name, or the cluster's own `kubectl get crd -o yaml`)
	// judges the objects as that cluster's API server does, as for a folder.
	proj, err := project.Open(nil, flags)
	if err != nil {
		return nil, err
	}
	var lr *watch.LoadResult
	if len(parts) <= 1 {
		var data []byte
		if len(parts) == 1 {
			data = parts[0].Data
		}
		lr = proj.LoadBytes("cluster "+objs.Context, data)
	} else {
		results := make([]*watch.LoadResult, len(parts))
		for i, part := range parts {
			results[i] = proj.LoadBytes(fmt.Sprintf("cluster %s (part %d)", objs.Context, i+1), part.Data)
		}
		lr = watch.Merge(results...)
	}
	res := proj.Translate(lr.Snapshot, project.Translation{Now: now, NoServing: true})
	c, err := CompareCluster(objs.Objects, res)
	if err != nil {
		return nil, err
	}
	return &ClusterCheck{Objects: objs, Load: lr, Comparison: c}, nil
}
