package main

import (
	"context"
	"io"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/internal/report"
)

// runCluster is `gwdev check --cluster`: it compares the status the
// cluster's controllers wrote with the spec's (app.CheckCluster) and prints
// every condition where they disagree; exit 1 when any does.
func (o *checkOptions) runCluster(ctx context.Context, out io.Writer, now metav1.Time) error {
	opts, err := o.cluster.options(true)
	if err != nil {
		return err
	}
	cc, err := app.CheckCluster(ctx, opts, project.Flags{Profiles: o.profiles, CRDs: o.crds, Classes: o.classes}, now)
	if err != nil {
		return err
	}
	if !report.WriteClusterComparison(out, cc.Objects, cc.Load, cc.Comparison) {
		return exitError{code: exitProblems}
	}
	return nil
}
