package conformance

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	"github.com/gwdev/gwdev/internal/kubetest"
)

var realAPI = flag.Bool("gwdev.apiserver", false, "run the suite against a real kube-apiserver on etcd (the one `make tools` builds; Debian's etcd-server) instead of the fake API")

// newRealAPIServer starts a real kube-apiserver on etcd (package kubetest,
// the one cmd/gwdev's cluster tests use), installs gwdev's Gateway API CRDs
// (watch/crds, with their bundle-version annotation) and returns the
// harness's API on it: a real client whose writes wake the controller, as
// the fake's do. The apiserver does its own bookkeeping (generation, uid,
// creationTimestamp, defaulting, schema and CEL validation); what a cluster's
// controllers would add the harness still plays (Pods, EndpointSlices) and
// it finalises deleted namespaces as the namespace controller does
// (finalizeNamespaces). Pod logs and exec are still served by the harness.
func newRealAPIServer(t *testing.T) (*apiServer, *namespaceFinalizer) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", ".ci", "tools.sh"))
	if err != nil {
		t.Fatal(err)
	}
	c := kubetest.Start(t, kubetest.Tool(t, script, "kube-apiserver"))
	crds, err := filepath.Glob(filepath.Join("..", "watch", "crds", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRDs in ../watch/crds (%v)", err)
	}
	c.InstallCRDs(t, crds)
	scheme, err := harnessScheme()
	if err != nil {
		t.Fatal(err)
	}
	cl, err := client.NewWithWatch(c.Config, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	a := &apiServer{changed: make(chan struct{}, 1)}
	a.WithWatch = interceptor.NewClient(cl, interceptor.Funcs{
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			defer a.notify()
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			defer a.notify()
			return c.Update(ctx, obj, opts...)
		},
		Patch: func(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
			defer a.notify()
			return c.Patch(ctx, obj, patch, opts...)
		},
		Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
			defer a.notify()
			return c.Delete(ctx, obj, opts...)
		},
		SubResourceUpdate: func(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
			defer a.notify()
			return c.SubResource(sub).Update(ctx, obj, opts...)
		},
		SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
			defer a.notify()
			return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
		},
	})
	cs, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		t.Fatal(err)
	}
	return a, &namespaceFinalizer{cs: cs, dyn: dyn, disc: cs.Discovery()}
}

// namespaceFinalizer does what kube-controller-manager's namespace
// controller does for a namespace being deleted: delete everything in it,
// then remove the "kubernetes" finalizer so the namespace goes.
type namespaceFinalizer struct {
	cs   kubernetes.Interface
	dyn  dynamic.Interface
	disc discovery.DiscoveryInterface
}

func (f *namespaceFinalizer) finalize(ctx context.Context) error {
	nss, err := f.cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	var terminating []corev1.Namespace
	for _, ns := range nss.Items {
		if ns.DeletionTimestamp != nil && slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
			terminating = append(terminating, ns)
		}
	}
	if len(terminating) == 0 {
		return nil
	}
	lists, err := f.disc.ServerPreferredNamespacedResources()
	if err != nil && len(lists) == 0 {
		return fmt.Errorf("discovering namespaced resources: %w", err)
	}
	var gvrs []schema.GroupVersionResource
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if slices.Contains(r.Verbs, "deletecollection") {
				gvrs = append(gvrs, gv.WithResource(r.Name))
			}
		}
	}
	zero := int64(0)
	for _, ns := range terminating {
		for _, gvr := range gvrs {
			// Pods go at once: there is no kubelet to wait for.
			if err := f.dyn.Resource(gvr).Namespace(ns.Name).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &zero}, metav1.ListOptions{}); err != nil {
				return fmt.Errorf("emptying namespace %s (%s): %w", ns.Name, gvr, err)
			}
		}
		ns.Spec.Finalizers = slices.DeleteFunc(ns.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
		if _, err := f.cs.CoreV1().Namespaces().Finalize(ctx, &ns, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("finalizing namespace %s: %w", ns.Name, err)
		}
	}
	return nil
}
