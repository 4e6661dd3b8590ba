package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

// clusterFlags are the kubectl-like flags of the commands that read a
// cluster.
type clusterFlags struct {
	kubeconfig, context, namespace string
	all                            bool
}

func (c *clusterFlags) add(f *pflag.FlagSet) {
	f.StringVar(&c.kubeconfig, "kubeconfig", "", "the kubeconfig file (default $KUBECONFIG, else ~/.kube/config)")
	f.StringVar(&c.context, "context", "", "the kubeconfig context (default the current one)")
	f.StringVarP(&c.namespace, "namespace", "n", "", "the namespace to read (default the context's, else default)")
	f.BoolVarP(&c.all, "all-namespaces", "A", false, "read every namespace")
}

func (c *clusterFlags) options(secrets bool) (watch.ClusterOptions, error) {
	if c.all && c.namespace != "" {
		return watch.ClusterOptions{}, errors.New("give -n NAMESPACE or -A, not both")
	}
	return watch.ClusterOptions{Kubeconfig: c.kubeconfig, Context: c.context, Namespace: c.namespace,
		AllNamespaces: c.all, Secrets: secrets}, nil
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
gwdev.yaml (backends:) to reach something on your machine.`,
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
	files := map[string][]*unstructured.Unstructured{}
	var order []string
	for _, u := range objs.Objects {
		ns := u.GetNamespace()
		if ns == "" {
			ns = "cluster"
		}
		resource := strings.ToLower(u.GetKind()) + "s"
		if k := engine.KindNamed(u.GetKind()); k != nil && k.Resource != "" {
			resource = k.Resource
		}
		name := filepath.Join(ns, resource+".yaml")
		if files[name] == nil {
			order = append(order, name)
		}
		files[name] = append(files[name], u)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if o.secrets {
		perm = 0o600
	}
	for _, name := range order {
		data, err := watch.ManifestYAML(files[name])
		if err != nil {
			return err
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		header := fmt.Sprintf("# Pulled by gwdev pull from context %s (%s).\n", objs.Context, objs.Server)
		if err := os.WriteFile(path, append([]byte(header), data...), perm); err != nil {
			return err
		}
		fmt.Fprintf(out, "  + %s (%s)\n", path, plural(len(files[name]), "object"))
	}
	if o.secrets {
		fmt.Fprintf(out, "gwdev pull: wrote %d files; try: gwdev up %s\n", len(order), dir)
		return nil
	}
	// Local certificates for the TLS listeners, whose Secrets stay in the
	// cluster.
	if err := (&certsOptions{caDir: o.caDir, days: 397}).run(out, dir); err != nil {
		return fmt.Errorf("local certificates for the TLS listeners: %w", err)
	}
	fmt.Fprintf(out, "gwdev pull: wrote %d files; try: gwdev up %s\n", len(order), dir)
	return nil
}
