package conformance

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
	"sigs.k8s.io/yaml"
)

// apiServer is the part of a kube-apiserver the suite relies on that
// controller-runtime's fake client lacks: metadata.generation (1 on create,
// bumped when anything outside metadata and status changes), uid and
// creationTimestamp, all immutable across updates. Writes are serialised
// so that a generation bump is atomic; every write wakes the controller.
type apiServer struct {
	client.WithWatch

	mu      sync.Mutex
	uids    atomic.Int64
	changed chan struct{}
}

// statusKinds are the Gateway API kinds with a status subresource.
func statusKinds() []client.Object {
	return []client.Object{
		&gwv1.GatewayClass{}, &gwv1.Gateway{}, &gwv1.ListenerSet{},
		&gwv1.HTTPRoute{}, &gwv1.GRPCRoute{}, &gwv1.TLSRoute{}, &gwv1.TCPRoute{}, &gwv1.UDPRoute{},
		&gwv1.BackendTLSPolicy{}, &gwxv1a1.XMesh{},
	}
}

// newAPIServer returns a fake API holding the Gateway API CRDs gwdev
// validates against (watch/crds, with their bundle-version annotation).
func newAPIServer() (*apiServer, error) {
	scheme, err := harnessScheme()
	if err != nil {
		return nil, err
	}
	crds, err := loadCRDs(filepath.Join("..", "watch", "crds"))
	if err != nil {
		return nil, err
	}
	a := &apiServer{changed: make(chan struct{}, 1)}
	a.WithWatch = fake.NewClientBuilder().
		WithScheme(scheme).
		WithStatusSubresource(statusKinds()...).
		WithObjects(crds...).
		WithInterceptorFuncs(interceptor.Funcs{
			Create:            a.create,
			Update:            a.update,
			Patch:             a.patch,
			Delete:            a.delete,
			SubResourceUpdate: a.subResourceUpdate,
			SubResourcePatch:  a.subResourcePatch,
		}).
		Build()
	return a, nil
}

// harnessScheme knows the kinds the harness and the suite read and write.
func harnessScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, gwv1.Install, gwxv1a1.Install, apiextensionsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("building the scheme: %w", err)
		}
	}
	return scheme, nil
}

// loadCRDs reads every CRD manifest of dir.
func loadCRDs(dir string) ([]client.Object, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no CRDs in %s: %v", dir, err)
	}
	var out []client.Object
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading CRD: %w", err)
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			return nil, fmt.Errorf("decoding CRD %s: %w", f, err)
		}
		out = append(out, crd)
	}
	return out, nil
}

// notify wakes the controller without blocking.
func (a *apiServer) notify() {
	select {
	case a.changed <- struct{}{}:
	default:
	}
}

func (a *apiServer) create(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	obj.SetGeneration(1)
	obj.SetUID(types.UID(fmt.Sprintf("00000000-0000-4000-8000-%012d", a.uids.Add(1))))
	obj.SetCreationTimestamp(metav1.NewTime(time.Now().Truncate(time.Second)))
	typed, back, err := typedForm(c.Scheme(), obj)
	if err != nil {
		return err
	}
	if err := c.Create(ctx, typed, opts...); err != nil {
		return err
	}
	a.notify()
	return back()
}

func (a *apiServer) update(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	old, err := a.current(ctx, c, obj)
	if err != nil {
		return err
	}
	obj.SetUID(old.GetUID())
	obj.SetCreationTimestamp(old.GetCreationTimestamp())
	gen := old.GetGeneration()
	changed, err := specChanged(c.Scheme(), old, obj)
	if err != nil {
		return err
	}
	if changed {
		gen++
	}
	obj.SetGeneration(gen)
	typed, back, err := typedForm(c.Scheme(), obj)
	if err != nil {
		return err
	}
	if err := c.Update(ctx, typed, opts...); err != nil {
		return err
	}
	a.notify()
	return back()
}

func (a *apiServer) patch(ctx context.Context, c client.WithWatch, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	old, err := a.current(ctx, c, obj)
	if err != nil {
		return err
	}
	if err := c.Patch(ctx, obj, patch, opts...); err != nil {
		return err
	}
	changed, err := specChanged(c.Scheme(), old, obj)
	if err != nil {
		return err
	}
	if changed {
		obj.SetGeneration(old.GetGeneration() + 1)
		if err := c.Update(ctx, obj); err != nil {
			return fmt.Errorf("bumping metadata.generation after a patch: %w", err)
		}
	}
	a.notify()
	return nil
}

func (a *apiServer) delete(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := c.Delete(ctx, obj, opts...); err != nil {
		return err
	}
	a.notify()
	return nil
}

func (a *apiServer) subResourceUpdate(ctx context.Context, c client.Client, sub string, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return c.SubResource(sub).Update(ctx, obj, opts...)
}

func (a *apiServer) subResourcePatch(ctx context.Context, c client.Client, sub string, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return c.SubResource(sub).Patch(ctx, obj, patch, opts...)
}

// typedForm returns obj as a typed object, so that the fake's tracker only
// ever stores typed objects (an object stored as Unstructured, as the
// suite's Applier writes them, cannot be listed into a typed list once it
// has been patched). back copies the stored result into obj.
func typedForm(s *runtime.Scheme, obj client.Object) (client.Object, func() error, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, func() error { return nil }, nil
	}
	ro, err := s.New(u.GroupVersionKind())
	if err != nil {
		return obj, func() error { return nil }, nil // a kind the scheme does not know: store as is
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, ro); err != nil {
		return nil, nil, fmt.Errorf("converting %s %s: %w", u.GetKind(), u.GetName(), err)
	}
	typed := ro.(client.Object)
	gvk := u.GroupVersionKind()
	back := func() error {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
		if err != nil {
			return err
		}
		u.Object = m
		u.SetGroupVersionKind(gvk)
		return nil
	}
	return typed, back, nil
}

// current reads the stored version of obj as a typed object.
func (a *apiServer) current(ctx context.Context, c client.WithWatch, obj client.Object) (client.Object, error) {
	gvk, err := apiutil.GVKForObject(obj, c.Scheme())
	if err != nil {
		return nil, err
	}
	ro, err := c.Scheme().New(gvk)
	if err != nil {
		return nil, err
	}
	old, ok := ro.(client.Object)
	if !ok {
		return nil, fmt.Errorf("%s is not an object", gvk)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), old); err != nil {
		return nil, err
	}
	return old, nil
}

// specChanged reports whether anything outside metadata and status differs,
// comparing both in their typed form so that a manifest (unstructured) and
// the stored object compare equal when they say the same.
func specChanged(s *runtime.Scheme, old, cur client.Object) (bool, error) {
	a, err := content(s, old)
	if err != nil {
		return false, err
	}
	b, err := content(s, cur)
	if err != nil {
		return false, err
	}
	return !reflect.DeepEqual(a, b), nil
}

func content(s *runtime.Scheme, obj client.Object) (map[string]any, error) {
	var typed runtime.Object = obj
	if u, ok := obj.(*unstructured.Unstructured); ok {
		t, err := s.New(u.GroupVersionKind())
		if err != nil {
			return nil, err
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, t); err != nil {
			return nil, err
		}
		typed = t
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(typed)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"apiVersion", "kind", "metadata", "status"} {
		delete(m, k)
	}
	return m, nil
}
