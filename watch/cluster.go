package watch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
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
	// RequestTimeout bounds each request to the cluster, its retries
	// included (0: DefaultRequestTimeout).
	RequestTimeout time.Duration
	// MaxObjects bounds the objects the cluster's answers may hold in all
	// (0: DefaultMaxObjects).
	MaxObjects int
	// MaxBytes bounds the bytes the cluster's answers may total (0:
	// DefaultMaxBytes).
	MaxBytes int64
}

// The limits of one ReadCluster, kubectl's request timeout among them.
const (
	// DefaultRequestTimeout bounds each request (--request-timeout).
	DefaultRequestTimeout = 30 * time.Second
	// DefaultMaxObjects bounds the objects read (--max-objects).
	DefaultMaxObjects = 20_000
	// DefaultMaxBytes bounds the bytes read (--max-read-mib).
	DefaultMaxBytes = 64 << 20
	// PageSize is the objects asked for per list request (limit=).
	PageSize = 500
	// maxEmptyPages ends a list whose server keeps answering pages
	// without objects and with a continue token.
	maxEmptyPages = 16
	// maxWarnings bounds the distinct warnings kept as notes.
	maxWarnings = 20
)

// ClusterObjects is what ReadCluster read: the Gateway API objects of the
// namespaces asked for and what they refer to, as the API server returned
// them (status included).
type ClusterObjects struct {
	// Context names the cluster; Server is its address without user
	// information (no credential of the kubeconfig is in any field).
	Context, Server string
	// Namespace is the namespace read ("": all).
	Namespace string
	// Objects are in registry kind order, then namespace/name.
	Objects []*unstructured.Unstructured
	// Listed holds, for each of Objects, the entry of the kinds table it
	// was asked for: its apiVersion and kind were checked to be that
	// kind's, its namespace and name to be valid names.
	Listed []*engine.Kind
	// Notes say what could not be read and why (a kind the cluster does
	// not serve, a reference to a missing object, the server's warnings).
	Notes []string
}

// refKeys are the fields whose values are references to other objects.
var refKeys = map[string]bool{"parentRefs": true, "backendRefs": true, "backendRef": true, "targetRefs": true,
	"caCertificateRefs": true, "certificateRefs": true, "clientCertificateRef": true}

// clusterReader lists and gets objects through the dynamic client.
type clusterReader struct {
	dyn  dynamic.Interface
	disc rest.Interface // discovery, with a context per request
	o    ClusterOptions
	// have holds the objects read, by key (nil: looked for, not there).
	have map[engine.ObjectKey]*unstructured.Unstructured
	// kinds holds the table entry each object of have was read as.
	kinds map[engine.ObjectKey]*engine.Kind
	// listed holds the lists read (resource, namespace, selector).
	listed map[string]bool
	// read counts the objects the cluster's answers held (MaxObjects).
	objects int
	budget  *readBudget
	out     *ClusterObjects
}

// ReadCluster reads a cluster's Gateway API objects (every Gateway API kind
// gwdev knows that the cluster serves) in the namespaces asked for, plus
// what they refer to: GatewayClasses and parent Gateways, Services and
// their EndpointSlices, ReferenceGrants of the namespaces involved,
// ConfigMaps of CA bundles, Namespaces, and, with Secrets, the Secrets of
// certificate references.
//
// A cluster is not trusted: lists are paged, every request has a timeout,
// the answers are bounded in objects and bytes, an object that is not of
// the kind asked for or whose namespace or name is not a valid name is an
// error naming it, and no credential of the kubeconfig appears in an error,
// a note or Server.
func ReadCluster(ctx context.Context, o ClusterOptions) (*ClusterObjects, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if o.Kubeconfig != "" {
		rules.ExplicitPath = o.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context})
	raw, err := cc.RawConfig()
	if err != nil {
		return nil, &redactedError{msg: "reading kubeconfig: " + (clusterCredentials{}).redact(err.Error()), err: err}
	}
	rc, err := cc.ClientConfig()
	if err != nil {
		return nil, &redactedError{msg: "kubeconfig: " + (clusterCredentials{}).redact(err.Error()), err: err}
	}
	creds := guardCredentials(rc)
	o.RequestTimeout = cmp.Or(o.RequestTimeout, DefaultRequestTimeout)
	o.MaxObjects = cmp.Or(o.MaxObjects, DefaultMaxObjects)
	o.MaxBytes = cmp.Or(o.MaxBytes, DefaultMaxBytes)
	budget := &readBudget{}
	budget.left.Store(o.MaxBytes)
	rc.Wrap(budget.wrap)
	if rc.QPS == 0 {
		// Requests go one at a time; kubectl's rate, so that client-go
		// never waits (nor logs that it did).
		rc.QPS, rc.Burst = 50, 300
	}
	warnings := &warningNotes{creds: creds}
	rc.WarningHandlerWithContext = warnings
	out := &ClusterObjects{Context: cmp.Or(o.Context, raw.CurrentContext), Server: serverName(rc.Host)}
	if o.AllNamespaces {
		o.Namespace = ""
	} else if o.Namespace == "" {
		if o.Namespace, _, err = cc.Namespace(); err != nil || o.Namespace == "" {
			o.Namespace = "default"
		}
	}
	out.Namespace = o.Namespace
	fail := func(err error) error {
		msg := fmt.Sprintf("reading cluster %s (%s): %v", out.Context, out.Server, err)
		return &redactedError{msg: creds.redact(msg), err: err}
	}
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		return nil, fail(err)
	}
	disc, err := discoveryClient(rc)
	if err != nil {
		return nil, fail(err)
	}
	r := &clusterReader{dyn: dyn, disc: disc, o: o, have: map[engine.ObjectKey]*unstructured.Unstructured{},
		kinds: map[engine.ObjectKey]*engine.Kind{}, listed: map[string]bool{}, budget: budget, out: out}
	if err := r.read(ctx); err != nil {
		return nil, fail(err)
	}
	out.Notes = append(out.Notes, warnings.notes()...)
	for i, n := range out.Notes {
		out.Notes[i] = creds.redact(n)
	}
	return out, nil
}

// discoveryClient is the REST client discovery's requests go through: the
// one client-go's discovery package makes (its settings: no API path or
// group version, a 32 s timeout when rc has none, discovery's burst), with
// a scheme of the meta/v1 types those requests decode (APIResourceList,
// Status) instead of client-go's scheme of every built-in kind, which
// would weigh on every command of the binary.
func discoveryClient(rc *rest.Config) (rest.Interface, error) {
	c := rest.CopyConfig(rc)
	c.APIPath, c.GroupVersion = "", nil
	if c.Timeout == 0 {
		c.Timeout = 32 * time.Second
	}
	if c.Burst == 0 {
		c.Burst = 300
	}
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"}) // as client-go's scheme does
	decoder := serializer.NewCodecFactory(s).UniversalDecoder()
	c.NegotiatedSerializer = serializer.NegotiatedSerializerWrapper(runtime.SerializerInfo{Serializer: runtime.NoopEncoder{Decoder: decoder}})
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	return rest.UnversionedRESTClientFor(c)
}

// warningNotes keeps the server's warnings (client-go would print them on
// stderr as they come) to show them as notes, redacted and bounded.
type warningNotes struct {
	creds clusterCredentials
	mu    sync.Mutex
	seen  []string
}

func (w *warningNotes) HandleWarningHeaderWithContext(_ context.Context, _ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.seen) < maxWarnings && !slices.Contains(w.seen, text) {
		w.seen = append(w.seen, text)
	}
}

func (w *warningNotes) notes() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, t := range w.seen {
		out = append(out, fmt.Sprintf("the server warned: %q", w.creds.redact(t)))
	}
	return out
}

// read lists the Gateway API kinds, then follows references.
func (r *clusterReader) read(ctx context.Context) error {
	for _, k := range engine.Kinds() {
		if k.CRD() == "" || k.Kind == "GatewayClass" {
			continue
		}
		gvr, ok, err := r.served(ctx, k)
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
		if err := r.list(ctx, k, gvr, ns, ""); err != nil {
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
func (r *clusterReader) served(ctx context.Context, k *engine.Kind) (schema.GroupVersionResource, bool, error) {
	for _, v := range k.Versions() {
		gv := schema.GroupVersion{Group: k.Group, Version: v}
		var list metav1.APIResourceList
		prefix := "/apis"
		if gv.Group == "" {
			prefix = "/api"
		}
		err := r.call(ctx, func(ctx context.Context) error {
			return r.disc.Get().AbsPath(prefix, gv.Group, gv.Version).Do(ctx).Into(&list)
		})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return schema.GroupVersionResource{}, false, fmt.Errorf("discovering %s: %w", gv, r.explain(err))
		}
		for _, res := range list.APIResources {
			if res.Name == k.Resource {
				return gv.WithResource(k.Resource), true, nil
			}
		}
	}
	return schema.GroupVersionResource{}, false, nil
}

// call runs one request (client-go's retries included) within
// RequestTimeout: every request to the cluster goes through it.
func (r *clusterReader) call(ctx context.Context, fn func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, r.o.RequestTimeout)
	defer cancel()
	err := fn(ctx)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &timeoutError{after: r.o.RequestTimeout, err: err}
	}
	return err
}

// timeoutError is a request the server did not answer in time.
type timeoutError struct {
	after time.Duration
	err   error
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("no answer within the request timeout of %s (--request-timeout): %v", e.after, e.err)
}
func (e *timeoutError) Unwrap() error { return e.err }

// explain turns an error of the cluster into one that says what happened:
// the byte limit when an answer went past it, the status code of an API
// error without a message (a bare 404 Status).
func (r *clusterReader) explain(err error) error {
	if r.budget.over.Load() {
		return fmt.Errorf("the cluster's answers are over the limit of %d MiB (%d bytes; --max-read-mib raises it)",
			r.o.MaxBytes>>20, r.o.MaxBytes)
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) && strings.TrimSpace(status.Status().Message) == "" {
		s := status.Status()
		text := fmt.Sprintf("the server answered %d %s", s.Code, http.StatusText(int(s.Code)))
		if s.Reason != "" {
			text += " (" + string(s.Reason) + ")"
		}
		return fmt.Errorf("%s with no message", text)
	}
	return err
}

// list reads the objects of kind k in ns ("": all namespaces), page by
// page.
func (r *clusterReader) list(ctx context.Context, k *engine.Kind, gvr schema.GroupVersionResource, ns, selector string) error {
	var ri dynamic.ResourceInterface = r.dyn.Resource(gvr)
	what := gvr.Resource
	if gvr.Group != "" {
		what += "." + gvr.Group
	}
	what += "/" + gvr.Version
	if ns != "" {
		ri = r.dyn.Resource(gvr).Namespace(ns)
		what += " in namespace " + ns
	}
	if selector != "" {
		what += " (" + selector + ")"
	}
	if r.listed[what] {
		return nil // a reference followed again
	}
	r.listed[what] = true
	cont, empty := "", 0
	for {
		var l *unstructured.UnstructuredList
		err := r.call(ctx, func(ctx context.Context) (err error) {
			l, err = ri.List(ctx, metav1.ListOptions{LabelSelector: selector, Limit: PageSize, Continue: cont})
			return err
		})
		if err != nil {
			return fmt.Errorf("listing %s: %w", what, r.explain(err))
		}
		if r.objects += len(l.Items); r.objects > r.o.MaxObjects {
			return fmt.Errorf("listing %s: the cluster's answers hold more than the limit of %d objects (--max-objects raises it)", what, r.o.MaxObjects)
		}
		for i := range l.Items {
			if err := checkListed(k, gvr.GroupVersion(), ns, &l.Items[i]); err != nil {
				return fmt.Errorf("listing %s: %w", what, err)
			}
			r.add(k, &l.Items[i])
		}
		next := l.GetContinue()
		switch {
		case next == "":
			return nil
		case next == cont:
			return fmt.Errorf("listing %s: the server answered the same continue token twice: refused (a list without end)", what)
		case len(l.Items) == 0:
			if empty++; empty > maxEmptyPages {
				return fmt.Errorf("listing %s: the server answered %d pages in a row without objects: refused (a list without end)", what, empty)
			}
		default:
			empty = 0
		}
		cont = next
	}
}

// checkListed refuses an object the cluster returned for kind k in
// namespace ns ("": any) that is not of that kind and version, or whose
// namespace or name is not a valid name: what gwdev writes and shows is
// named after what it asked for, never after what a server says.
func checkListed(k *engine.Kind, gv schema.GroupVersion, ns string, u *unstructured.Unstructured) error {
	item := fmt.Sprintf("an object (apiVersion %q, kind %q, namespace %q, name %q)",
		clip(u.GetAPIVersion()), clip(u.GetKind()), clip(u.GetNamespace()), clip(u.GetName()))
	if u.GetAPIVersion() != gv.String() || u.GetKind() != k.Kind {
		return fmt.Errorf("the server returned %s where %s %s was asked for: refused", item, gv, k.Kind)
	}
	switch got := u.GetNamespace(); {
	case !k.Namespaced && got != "":
		return fmt.Errorf("the server returned %s with a namespace for the cluster-scoped %s: refused", item, k.Kind)
	case k.Namespaced && len(validation.IsDNS1123Label(got)) > 0:
		return fmt.Errorf("the server returned %s whose namespace is not a valid namespace name: refused", item)
	case k.Namespaced && ns != "" && got != ns:
		return fmt.Errorf("the server returned %s outside namespace %s, which was asked for: refused", item, ns)
	}
	if len(validation.IsDNS1123Subdomain(u.GetName())) > 0 {
		return fmt.Errorf("the server returned %s whose name is not a valid object name: refused", item)
	}
	return nil
}

// clip shortens a value a server chose for a message.
func clip(s string) string {
	if len(s) > 100 {
		return s[:100] + "…"
	}
	return s
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
	if !validRef(k, key) {
		r.have[key] = nil
		r.out.Notes = append(r.out.Notes, fmt.Sprintf("%s is referred to and is not a valid name: not read", clip(key.String())))
		return nil
	}
	gvr := schema.GroupVersionResource{Group: k.Group, Version: k.Version, Resource: k.Resource}
	if k.CRD() != "" {
		var ok bool
		var err error
		if gvr, ok, err = r.served(ctx, k); err != nil || !ok {
			return err
		}
	}
	var ri dynamic.ResourceInterface = r.dyn.Resource(gvr)
	if k.Namespaced {
		ri = r.dyn.Resource(gvr).Namespace(key.Namespace)
	}
	var u *unstructured.Unstructured
	err := r.call(ctx, func(ctx context.Context) (err error) {
		u, err = ri.Get(ctx, key.Name, metav1.GetOptions{})
		return err
	})
	switch {
	case err == nil:
	case r.budget.over.Load():
		return fmt.Errorf("reading %s: %w", key, r.explain(err))
	case apierrors.IsNotFound(err):
		r.have[key] = nil // not there: do not ask again
		r.out.Notes = append(r.out.Notes, fmt.Sprintf("%s is referred to and does not exist", key))
		return nil
	case apierrors.IsForbidden(err):
		r.have[key] = nil
		r.out.Notes = append(r.out.Notes, fmt.Sprintf("%s: not read: %v", key, r.explain(err)))
		return nil
	default:
		return fmt.Errorf("reading %s: %w", key, r.explain(err))
	}
	if r.objects++; r.objects > r.o.MaxObjects {
		return fmt.Errorf("reading %s: the cluster's answers hold more than the limit of %d objects (--max-objects raises it)", key, r.o.MaxObjects)
	}
	ns := ""
	if k.Namespaced {
		ns = key.Namespace
	}
	if err := checkListed(k, gvr.GroupVersion(), ns, u); err != nil {
		return fmt.Errorf("reading %s: %w", key, err)
	}
	if u.GetName() != key.Name {
		return fmt.Errorf("reading %s: the server returned %q: refused", key, clip(u.GetName()))
	}
	r.add(k, u)
	return nil
}

// validRef reports whether a reference found in an object names an object
// of kind k by valid names (references come from the cluster, too).
func validRef(k *engine.Kind, key engine.ObjectKey) bool {
	if k.Namespaced && len(validation.IsDNS1123Label(key.Namespace)) > 0 {
		return false
	}
	return len(validation.IsDNS1123Subdomain(key.Name)) == 0
}

func (r *clusterReader) add(k *engine.Kind, u *unstructured.Unstructured) {
	key := engine.ObjectKey{Kind: k.Kind, Namespace: u.GetNamespace(), Name: u.GetName()}
	if _, ok := r.have[key]; !ok {
		r.have[key] = u
		r.kinds[key] = k
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
			k := engine.KindNamed("EndpointSlice")
			gvr := schema.GroupVersionResource{Group: k.Group, Version: k.Version, Resource: k.Resource}
			if err := r.list(ctx, k, gvr, key.Namespace, "kubernetes.io/service-name="+key.Name); err != nil {
				return err
			}
		}
	}
	// ReferenceGrants of namespaces outside the one read: they allow the
	// cross-namespace references into them.
	if r.o.Namespace != "" {
		k := engine.KindNamed("ReferenceGrant")
		gvr, ok, err := r.served(ctx, k)
		if err != nil {
			return err
		}
		for ns := range namespaces {
			if ok && ns != r.o.Namespace && len(validation.IsDNS1123Label(ns)) == 0 {
				if err := r.list(ctx, k, gvr, ns, ""); err != nil {
					return err
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
		r.out.Listed = append(r.out.Listed, r.kinds[k])
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

// ManifestFile is one YAML stream of ManifestFiles.
type ManifestFile struct {
	// Data is the stream; Objects counts its documents.
	Data    []byte
	Objects int
}

// ManifestFiles writes objects as YAML streams, each cleaned, starting a
// new stream where the next object would take one past max bytes or past
// MaxFileDocuments objects: each stream fits a manifest file the loader
// takes (a single object over max is a stream of its own, which the loader
// then refuses).
func ManifestFiles(objs []*unstructured.Unstructured, max int) ([]ManifestFile, error) {
	var files []ManifestFile
	var cur ManifestFile
	for _, u := range objs {
		y, err := sigsyaml.Marshal(CleanManifest(u).Object)
		if err != nil {
			return nil, fmt.Errorf("writing %s %s/%s: %w", u.GetKind(), u.GetNamespace(), u.GetName(), err)
		}
		if cur.Objects > 0 && (len(cur.Data)+len("---\n")+len(y) > max || cur.Objects >= MaxFileDocuments) {
			files, cur = append(files, cur), ManifestFile{}
		}
		if cur.Objects > 0 {
			cur.Data = append(cur.Data, "---\n"...)
		}
		cur.Data = append(cur.Data, y...)
		cur.Objects++
	}
	if cur.Objects > 0 {
		files = append(files, cur)
	}
	return files, nil
}
