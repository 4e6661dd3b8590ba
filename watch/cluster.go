package watch

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/gwdev/gwdev/engine"
)

// ClusterOptions say which cluster and namespaces to read, as kubectl's
// flags do.
type ClusterOptions struct {
	// Kubeconfig is the kubeconfig file ("": $KUBECONFIG, else
	// ~/.kube/config).
	Kubeconfig string
	// Context is the kubeconfig context ("": the current one).
	Context string
	// Namespace is the namespace read ("": the context's, else default).
	Namespace string
	// AllNamespaces reads every namespace (Namespace is ignored).
	AllNamespaces bool
	// Secrets reads the Secrets TLS listeners refer to (false: none is
	// read).
	Secrets bool
}

// ClusterObjects is what ReadCluster read: the Gateway API objects of the
// namespaces asked for and what they refer to, as the API server returned
// them (status included).
type ClusterObjects struct {
	// Context and Server name the cluster.
	Context, Server string
	// Namespace is the namespace read ("": all).
	Namespace string
	// Objects are in registry kind order, then namespace/name.
	Objects []*unstructured.Unstructured
	// Notes say what could not be read and why (a kind the cluster does
	// not serve, a reference to a missing object).
	Notes []string
}

// refKeys are the fields whose values are references to other objects.
var refKeys = map[string]bool{"parentRefs": true, "backendRefs": true, "backendRef": true, "targetRefs": true,
	"caCertificateRefs": true, "certificateRefs": true, "clientCertificateRef": true}

// clusterReader lists and gets objects through the dynamic client.
type clusterReader struct {
	dyn  dynamic.Interface
	disc discovery.DiscoveryInterface
	o    ClusterOptions
	// have holds the objects read, by key.
	have map[engine.ObjectKey]*unstructured.Unstructured
	out  *ClusterObjects
}

// ReadCluster reads a cluster's Gateway API objects (every Gateway API kind
// gwdev knows that the cluster serves) in the namespaces asked for, plus
// what they refer to: GatewayClasses and parent Gateways, Services and
// their EndpointSlices, ReferenceGrants of the namespaces involved,
// ConfigMaps of CA bundles, Namespaces, and, with Secrets, the Secrets of
// certificate references.
func ReadCluster(ctx context.Context, o ClusterOptions) (*ClusterObjects, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.Kubeconfig != "" {
		rules.ExplicitPath = o.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context})
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, fmt.Errorf("reading kubeconfig: %w", err)
	}
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	out := &ClusterObjects{Context: cmp.Or(o.Context, raw.CurrentContext), Server: rc.Host}
	if o.AllNamespaces {
		o.Namespace = ""
	} else if o.Namespace == "" {
		if o.Namespace, _, err = cc.Namespace(); err != nil || o.Namespace == "" {
			o.Namespace = "default"
		}
	}
	out.Namespace = o.Namespace
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		return nil, err
	}
	r := &clusterReader{dyn: dyn, disc: disc, o: o, have: map[engine.ObjectKey]*unstructured.Unstructured{}, out: out}
	if err := r.read(ctx); err != nil {
		return nil, fmt.Errorf("reading cluster %s (%s): %w", out.Context, out.Server, err)
	}
	return out, nil
}

// read lists the Gateway API kinds, then follows references.
func (r *clusterReader) read(ctx context.Context) error {
	for _, k := range engine.Kinds() {
		if k.CRD() == "" || k.Kind == "GatewayClass" {
			continue
		}
		gvr, ok, err := r.served(k)
		if err != nil {
			return err
		}
		if !ok {
			r.out.Notes = append(r.out.Notes, fmt.Sprintf("the cluster serves no %s (%s): not read", k.Kind, strings.Join(k.Versions(), ", ")))
			continue
		}
		ns := r.o.Namespace
		if !k.Namespaced {
			ns = ""
		}
		if err := r.list(ctx, k.Kind, gvr, ns, ""); err != nil {
			return err
		}
	}
	// References, followed until nothing new is read (a route's parent
	// Gateway in another namespace refers to a class…).
	for range 4 {
		before := len(r.have)
		if err := r.follow(ctx); err != nil {
			return err
		}
		if len(r.have) == before {
			break
		}
	}
	r.sort()
	return nil
}

// served returns the resource of kind k at the first of gwdev's versions
// the cluster serves.
func (r *clusterReader) served(k *engine.Kind) (schema.GroupVersionResource, bool, error) {
	for _, v := range k.Versions() {
		gv := schema.GroupVersion{Group: k.Group, Version: v}
		list, err := r.disc.ServerResourcesForGroupVersion(gv.String())
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return schema.GroupVersionResource{}, false, fmt.Errorf("discovering %s: %w", gv, err)
		}
		for _, res := range list.APIResources {
			if res.Name == k.Resource {
				return gv.WithResource(k.Resource), true, nil
			}
		}
	}
	return schema.GroupVersionResource{}, false, nil
}

// list reads the objects of a resource in ns ("": all namespaces).
func (r *clusterReader) list(ctx context.Context, kind string, gvr schema.GroupVersionResource, ns, selector string) error {
	var ri dynamic.ResourceInterface = r.dyn.Resource(gvr)
	if ns != "" {
		ri = r.dyn.Resource(gvr).Namespace(ns)
	}
	l, err := ri.List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return fmt.Errorf("listing %s: %w", gvr.Resource, err)
	}
	for i := range l.Items {
		r.add(kind, &l.Items[i])
	}
	return nil
}

// get reads one object; a missing one is a note, not an error.
func (r *clusterReader) get(ctx context.Context, key engine.ObjectKey) error {
	if _, ok := r.have[key]; ok {
		return nil
	}
	k := engine.KindNamed(key.Kind)
	if k == nil || k.Resource == "" {
		return nil
	}
	gvr := schema.GroupVersionResource{Group: k.Group, Version: k.Version, Resource: k.Resource}
	if k.CRD() != "" {
		var ok bool
		var err error
		if gvr, ok, err = r.served(k); err != nil || !ok {
			return err
		}
	}
	var ri dynamic.ResourceInterface = r.dyn.Resource(gvr)
	if k.Namespaced {
		ri = r.dyn.Resource(gvr).Namespace(key.Namespace)
	}
	u, err := ri.Get(ctx, key.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		r.have[key] = nil // not there: do not ask again
		r.out.Notes = append(r.out.Notes, fmt.Sprintf("%s is referred to and does not exist", key))
		return nil
	case apierrors.IsForbidden(err):
		r.have[key] = nil
		r.out.Notes = append(r.out.Notes, fmt.Sprintf("%s: not read: %v", key, err))
		return nil
	case err != nil:
		return fmt.Errorf("reading %s: %w", key, err)
	}
	r.add(key.Kind, u)
	return nil
}

func (r *clusterReader) add(kind string, u *unstructured.Unstructured) {
	key := engine.ObjectKey{Kind: kind, Namespace: u.GetNamespace(), Name: u.GetName()}
	if _, ok := r.have[key]; !ok {
		r.have[key] = u
	}
}

// follow reads what the objects read so far refer to.
func (r *clusterReader) follow(ctx context.Context) error {
	var want []engine.ObjectKey
	namespaces := map[string]bool{}
	for key, u := range r.have {
		if u == nil {
			continue
		}
		if key.Namespace != "" {
			namespaces[key.Namespace] = true
		}
		if key.Kind == "Gateway" {
			if c, ok, _ := unstructured.NestedString(u.Object, "spec", "gatewayClassName"); ok {
				want = append(want, engine.ObjectKey{Kind: "GatewayClass", Name: c})
			}
		}
		eachRef(u.Object, key.Namespace, "", func(field string, ref engine.ObjectKey) {
			switch {
			case ref.Kind == "Secret" && !r.o.Secrets:
			case ref.Kind == "Secret", ref.Kind == "ConfigMap", ref.Kind == "Service", ref.Kind == "Gateway", ref.Kind == "ListenerSet":
				want = append(want, ref)
				namespaces[ref.Namespace] = true
			}
		})
	}
	for ns := range namespaces {
		want = append(want, engine.ObjectKey{Kind: "Namespace", Name: ns})
	}
	slices.SortFunc(want, func(a, b engine.ObjectKey) int { return cmp.Compare(a.String(), b.String()) })
	for _, key := range slices.Compact(want) {
		if err := r.get(ctx, key); err != nil {
			return err
		}
		if key.Kind == "Service" && r.have[key] != nil {
			gvr := schema.GroupVersionResource{Group: "discovery.k8s.io", Version: "v1", Resource: "endpointslices"}
			if err := r.list(ctx, "EndpointSlice", gvr, key.Namespace, "kubernetes.io/service-name="+key.Name); err != nil {
				return err
			}
		}
	}
	// ReferenceGrants of namespaces outside the one read: they allow the
	// cross-namespace references into them.
	if r.o.Namespace != "" {
		if gvr, ok, err := r.served(engine.KindNamed("ReferenceGrant")); err == nil && ok {
			for ns := range namespaces {
				if ns != r.o.Namespace {
					if err := r.list(ctx, "ReferenceGrant", gvr, ns, ""); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// eachRef calls fn with every object reference under v (parentRefs,
// backendRefs, targetRefs, certificate references), its kind defaulted as
// the field's API defines it and its namespace defaulted to ns.
func eachRef(v any, ns, field string, fn func(field string, ref engine.ObjectKey)) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if !refKeys[k] {
				eachRef(c, ns, k, fn)
				continue
			}
			switch refs := c.(type) {
			case []any:
				for _, one := range refs {
					if m, ok := one.(map[string]any); ok {
						refOf(m, ns, k, fn)
					}
				}
			case map[string]any:
				refOf(refs, ns, k, fn)
			}
		}
	case []any:
		for _, c := range t {
			eachRef(c, ns, field, fn)
		}
	}
}

// refOf defaults one reference's kind by its field.
func refOf(m map[string]any, ns, field string, fn func(string, engine.ObjectKey)) {
	name, _ := m["name"].(string)
	if name == "" {
		return
	}
	kind, _ := m["kind"].(string)
	if kind == "" {
		switch field {
		case "parentRefs":
			kind = "Gateway"
		case "backendRefs", "backendRef":
			kind = "Service"
		case "certificateRefs", "clientCertificateRef":
			kind = "Secret"
		}
	}
	if n, ok := m["namespace"].(string); ok && n != "" {
		ns = n
	}
	fn(field, engine.ObjectKey{Kind: kind, Namespace: ns, Name: name})
}

// sort fills Objects in registry order, then namespace/name.
func (r *clusterReader) sort() {
	order := map[string]int{}
	for i, k := range engine.Kinds() {
		order[k.Kind] = i
	}
	keys := make([]engine.ObjectKey, 0, len(r.have))
	for k, u := range r.have {
		if u != nil {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b engine.ObjectKey) int {
		return cmp.Or(cmp.Compare(order[a.Kind], order[b.Kind]), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	for _, k := range keys {
		r.out.Objects = append(r.out.Objects, r.have[k])
	}
	slices.Sort(r.out.Notes)
	r.out.Notes = slices.Compact(r.out.Notes)
}

// CleanManifest returns a copy of a cluster object as a manifest to keep:
// without status, managedFields, resourceVersion, uid, generation,
// ownerReferences, kubectl's last-applied annotation and the addresses
// the cluster allocated (a Service's clusterIP). creationTimestamp stays:
// it orders conflicting routes.
func CleanManifest(u *unstructured.Unstructured) *unstructured.Unstructured {
	c := u.DeepCopy()
	delete(c.Object, "status")
	for _, f := range []string{"managedFields", "resourceVersion", "uid", "generation", "selfLink", "ownerReferences"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	if ann := c.GetAnnotations(); ann != nil {
		delete(ann, "kubectl.kubernetes.io/last-applied-configuration")
		if len(ann) == 0 {
			ann = nil
		}
		c.SetAnnotations(ann)
	}
	switch c.GetKind() {
	case "Service":
		unstructured.RemoveNestedField(c.Object, "spec", "clusterIP")
		unstructured.RemoveNestedField(c.Object, "spec", "clusterIPs")
	case "Namespace":
		delete(c.Object, "spec")
	}
	return c
}

// ManifestYAML writes objects as one YAML stream, each cleaned.
func ManifestYAML(objs []*unstructured.Unstructured) ([]byte, error) {
	var b strings.Builder
	for i, u := range objs {
		y, err := sigsyaml.Marshal(CleanManifest(u).Object)
		if err != nil {
			return nil, fmt.Errorf("writing %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	return []byte(b.String()), nil
}
