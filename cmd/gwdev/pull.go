package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
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
	files, err := pulledFiles(objs, header)
	if err != nil {
		return err
	}
	// What gwdev up DIR will say of the files, before one is written.
	proj, err := app.OpenProject(nil, app.ProjectFlags{})
	if err != nil {
		return err
	}
	if err := checkPulled(out, proj, files); err != nil {
		return err
	}
	perm := os.FileMode(0o644)
	if o.secrets {
		perm = 0o600
	}
	if err := writePulled(out, dir, files, perm); err != nil {
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

// pulledFile is one file pull writes: a name it made itself, relative to
// DIR, and its content.
type pulledFile struct {
	// name is "NAMESPACE/RESOURCE.yaml" ("cluster/…" for cluster-scoped
	// kinds), "RESOURCE-N.yaml" for the Nth part of a split one.
	name string
	data []byte
	// objects counts the objects in data.
	objects int
}

// pulledFiles groups the objects read into one file per namespace and
// kind, named after the kind each was asked for (ClusterObjects.Listed),
// split where a file would be over the loader's watch.MaxFileSize.
func pulledFiles(objs *watch.ClusterObjects, header string) ([]pulledFile, error) {
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
	var files []pulledFile
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
			files = append(files, pulledFile{name: name, data: append([]byte(header), part.Data...), objects: part.Objects})
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

// checkPulled loads each file as gwdev up DIR will: a file or document the
// loader refuses is an error naming it, and nothing is written; other
// problems are printed (the cluster took objects gwdev's CRDs judge).
func checkPulled(out io.Writer, proj *app.Project, files []pulledFile) error {
	var refused []string
	for _, f := range files {
		for _, p := range proj.LoadBytes(f.name, f.data).Problems {
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

// writePulled writes the files into dir through an os.Root, so that no
// name, symlink or ".." takes a write outside it, and removes the parts
// of a split file an earlier pull wrote that this one did not.
func writePulled(out io.Writer, dir string, files []pulledFile, perm os.FileMode) error {
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
		if err := root.MkdirAll(path.Dir(f.name), 0o755); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, f.name), err)
		}
		if err := root.WriteFile(f.name, f.data, perm); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, f.name), err)
		}
		if err := root.Chmod(f.name, perm); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, f.name), err)
		}
		written[f.name] = true
		fmt.Fprintf(out, "  + %s (%s)\n", filepath.Join(dir, f.name), plural(f.objects, "object"))
	}
	for _, f := range files {
		base, ok := strings.CutSuffix(f.name, ".yaml")
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
