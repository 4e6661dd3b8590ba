package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/project"
	"github.com/gwdev/gwdev/watch"
)

// clusterFlags are the kubectl-like flags of the commands that read a
// cluster.
type clusterFlags struct {
	kubeconfig, context, namespace string
	all                            bool
	// requestTimeout, maxObjects and maxReadMiB bound what a cluster can
	// make gwdev wait for and hold (watch.ClusterOptions).
	requestTimeout         time.Duration
	maxObjects, maxReadMiB int
}

func (c *clusterFlags) add(f *pflag.FlagSet) {
	f.StringVar(&c.kubeconfig, "kubeconfig", "", "the kubeconfig file (default $KUBECONFIG, else ~/.kube/config)")
	f.StringVar(&c.context, "context", "", "the kubeconfig context (default the current one)")
	f.StringVarP(&c.namespace, "namespace", "n", "", "the namespace to read (default the context's, else default)")
	f.BoolVarP(&c.all, "all-namespaces", "A", false, "read every namespace")
	f.DurationVar(&c.requestTimeout, "request-timeout", watch.DefaultRequestTimeout, "give up on a request the cluster has not answered in this long")
	f.IntVar(&c.maxObjects, "max-objects", watch.DefaultMaxObjects, "read at most this many objects from the cluster; more is an error")
	f.IntVar(&c.maxReadMiB, "max-read-mib", watch.DefaultMaxBytes>>20, "read at most this many MiB of the cluster's answers; more is an error")
}

func (c *clusterFlags) options(secrets bool) (watch.ClusterOptions, error) {
	if c.all && c.namespace != "" {
		return watch.ClusterOptions{}, errors.New("give -n NAMESPACE or -A, not both")
	}
	if c.requestTimeout <= 0 || c.maxObjects <= 0 || c.maxReadMiB <= 0 {
		return watch.ClusterOptions{}, errors.New("--request-timeout, --max-objects and --max-read-mib must be positive")
	}
	return watch.ClusterOptions{Kubeconfig: c.kubeconfig, Context: c.context, Namespace: c.namespace,
		AllNamespaces: c.all, Secrets: secrets, RequestTimeout: c.requestTimeout, MaxObjects: c.maxObjects,
		MaxBytes: int64(c.maxReadMiB) << 20}, nil
}

// pullOptions are the flags of `gwdev pull`.
type pullOptions struct {
	cluster clusterFlags
	secrets bool
	caDir   string
}

func newPullCmd() *cobra.Command {
	o := &pullOptions{}
	cmd := &cobra.Command{
		Use:   "pull [--context C] [-n NS | -A] DIR",
		Short: "Write a cluster's Gateway API objects and what they refer to as manifests in DIR",
		Long: `pull reads, from the cluster of your kubeconfig (as kubectl does), the Gateway API objects of
a namespace (-n, default the context's) or of all (-A) and what they refer to — GatewayClasses,
parent Gateways, Services and their EndpointSlices, ReferenceGrants, ConfigMaps of CA bundles,
Namespaces — and writes them into DIR as clean manifests (no status, managedFields,
resourceVersion or uid), one file per namespace and kind, so that gwdev up DIR serves that routing.

Secrets are read only with --secrets. Without it, the TLS listeners get certificates from a local
CA as gwdev certs makes them (DIR/gwdev-certs.yaml).

EndpointSlices hold the cluster's Pod addresses: map a Service to a local address in
gwdev.yaml (backends:) to reach something on your machine.

The cluster is not trusted. Files are named after the kinds pull asks for, never after what the
server returns, and written only inside DIR; an object of another kind or version, or with a
namespace or name that is not a valid name, is an error naming it. Lists are read 500 objects at a
time, bounded by --max-objects and --max-read-mib, each request by --request-timeout. A file over
the loader's 10 MiB is split; a file gwdev's loader would still refuse is an error, and nothing is
written. No credential of the kubeconfig (a password in the server's URL, a token, a key) is
printed or written.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout(), args[0])
		},
	}
	o.cluster.add(cmd.Flags())
	cmd.Flags().BoolVar(&o.secrets, "secrets", false, "also write the Secrets that certificate references name (private keys: keep the folder private)")
	cmd.Flags().StringVar(&o.caDir, "ca-dir", "", "without --secrets: keep the local CA in this directory (default ~/.config/gwdev/ca)")
	return cmd
}

func (o *pullOptions) run(ctx context.Context, out io.Writer, dir string) error {
	opts, err := o.cluster.options(o.secrets)
	if err != nil {
		return err
	}
	objs, err := watch.ReadCluster(ctx, opts)
	if err != nil {
		return err
	}
	where := "namespace " + objs.Namespace
	if objs.Namespace == "" {
		where = "every namespace"
	}
	fmt.Fprintf(out, "gwdev pull: context %s (%s), %s: %s\n", objs.Context, objs.Server, where, plural(len(objs.Objects), "object"))
	for _, n := range objs.Notes {
		fmt.Fprintf(out, "  - %s\n", n)
	}
	header := fmt.Sprintf("# Pulled by gwdev pull from context %s (%s).\n", objs.Context, objs.Server)
	files, err := app.PulledFiles(objs, header)
	if err != nil {
		return err
	}
	// What gwdev up DIR will say of the files, before one is written.
	proj, err := project.Open(nil, project.Flags{})
	if err != nil {
		return err
	}
	if err := app.CheckPulled(out, proj, files); err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if o.secrets {
		perm = 0o600
	}
	if err := app.WritePulled(out, dir, files, perm); err != nil {
		return err
	}
	if !o.secrets {
		// Local certificates for the TLS listeners, whose Secrets stay in
		// the cluster.
		if err := (&certsOptions{caDir: o.caDir, days: 397}).run(out, dir); err != nil {
			return fmt.Errorf("local certificates for the TLS listeners: %w", err)
		}
	}
	fmt.Fprintf(out, "gwdev pull: wrote %s; try: gwdev up %s\n", plural(len(files), "file"), dir)
	return nil
}
