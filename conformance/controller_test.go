package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log"
	"reflect"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

// controller is the loop a Gateway controller runs in a cluster, built
// only from gwdev's own parts: it reads every object gwdev knows from the
// API, loads them with gwdev's loader (schema validation and CRD defaulting,
// which the fake API does not do), translates them with the engine, applies
// the routing table to the emulator and writes the engine's status back.
// It adds no routing or status logic of its own.
type controller struct {
	api    *apiServer
	loader *watch.Loader
	srv    *emulator.Server
	kube   *kubelet
	logf   func(format string, args ...any)

	// prev is the last translation: engine.TranslateNext keeps each
	// Gateway's address from it, exactly as `gwdev up` does.
	prev *engine.Result

	lastInput    uint64
	lastProblems string
	lastBind     string
}

// gatewayKinds lists, for every kind gwdev reads, an empty list to read it
// into and its apiVersion and kind for the loader.
var gatewayKinds = []struct {
	list func() client.ObjectList
	gvk  schema.GroupVersionKind
}{
	{func() client.ObjectList { return &gwv1.GatewayClassList{} }, gwv1.SchemeGroupVersion.WithKind("GatewayClass")},
	{func() client.ObjectList { return &gwv1.GatewayList{} }, gwv1.SchemeGroupVersion.WithKind("Gateway")},
	{func() client.ObjectList { return &gwv1.ListenerSetList{} }, gwv1.SchemeGroupVersion.WithKind("ListenerSet")},
	{func() client.ObjectList { return &gwv1.HTTPRouteList{} }, gwv1.SchemeGroupVersion.WithKind("HTTPRoute")},
	{func() client.ObjectList { return &gwv1.GRPCRouteList{} }, gwv1.SchemeGroupVersion.WithKind("GRPCRoute")},
	{func() client.ObjectList { return &gwv1.TLSRouteList{} }, gwv1.SchemeGroupVersion.WithKind("TLSRoute")},
	{func() client.ObjectList { return &gwv1.TCPRouteList{} }, gwv1.SchemeGroupVersion.WithKind("TCPRoute")},
	{func() client.ObjectList { return &gwv1.UDPRouteList{} }, gwv1.SchemeGroupVersion.WithKind("UDPRoute")},
	{func() client.ObjectList { return &gwv1.ReferenceGrantList{} }, gwv1.SchemeGroupVersion.WithKind("ReferenceGrant")},
	{func() client.ObjectList { return &gwv1.BackendTLSPolicyList{} }, gwv1.SchemeGroupVersion.WithKind("BackendTLSPolicy")},
	{func() client.ObjectList { return &gwxv1a1.XMeshList{} }, gwxv1a1.SchemeGroupVersion.WithKind("XMesh")},
	{func() client.ObjectList { return &corev1.ServiceList{} }, corev1.SchemeGroupVersion.WithKind("Service")},
	{func() client.ObjectList { return &corev1.SecretList{} }, corev1.SchemeGroupVersion.WithKind("Secret")},
	{func() client.ObjectList { return &corev1.ConfigMapList{} }, corev1.SchemeGroupVersion.WithKind("ConfigMap")},
	{func() client.ObjectList { return &corev1.NamespaceList{} }, corev1.SchemeGroupVersion.WithKind("Namespace")},
	{func() client.ObjectList { return &discoveryv1.EndpointSliceList{} }, discoveryv1.SchemeGroupVersion.WithKind("EndpointSlice")},
}

// resync is how often the loop runs without being woken, to retry status
// writes that conflicted.
const resync = time.Second

// run reconciles until ctx is done.
func (c *controller) run(ctx context.Context) {
	tick := time.NewTicker(resync)
	defer tick.Stop()
	for {
		if err := c.kube.reconcile(ctx); err != nil && ctx.Err() == nil {
			c.logf("kubelet: %v", err)
		}
		if err := c.reconcile(ctx); err != nil && ctx.Err() == nil {
			c.logf("controller: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-c.api.changed:
			// Let a burst of writes (a manifest of several objects) land.
			time.Sleep(5 * time.Millisecond)
		case <-tick.C:
		}
	}
}

// reconcile runs one pass: read, load, translate, apply, write status.
func (c *controller) reconcile(ctx context.Context) error {
	docs, generations, err := c.readObjects(ctx)
	if err != nil {
		return err
	}
	h := fnv.New64a()
	h.Write(docs)
	sum := h.Sum64()
	if sum == c.lastInput {
		return nil
	}
	res := c.loader.LoadBytes("apiserver", docs)
	c.reportProblems(res.Problems)
	restoreGenerations(res.Snapshot, generations)
	opts := engine.Options{
		OnlyOwnClasses: true,
		Now:            metav1.NewTime(time.Now().UTC().Truncate(time.Second)),
	}
	out := engine.TranslateNext(c.prev, res.Snapshot, opts) // the call `gwdev up` makes (cmd/gwdev/up.go)
	c.prev = out
	rep := c.srv.Apply(out.Table)
	c.reportBind(rep)
	if err := c.writeStatus(ctx, out.Objects); err != nil {
		c.lastInput = 0 // retried on the next pass
		return err
	}
	if rep.Err() != nil {
		c.lastInput = 0 // ports that could not be bound are tried again
		return nil
	}
	c.lastInput = sum
	return nil
}

// readObjects lists every object gwdev knows and renders them as one
// multi-document manifest, the way a user's folder would hold them: status,
// resourceVersion and managedFields are left out. It also returns each
// object's metadata.generation by kind/namespace/name.
func (c *controller) readObjects(ctx context.Context) ([]byte, map[engine.ObjectKey]int64, error) {
	var buf bytes.Buffer
	generations := map[engine.ObjectKey]int64{}
	for _, k := range gatewayKinds {
		list := k.list()
		if err := c.api.List(ctx, list); err != nil {
			return nil, nil, fmt.Errorf("listing %s: %w", k.gvk.Kind, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, nil, err
		}
		for _, item := range items {
			if mo, ok := item.(metav1.Object); ok {
				generations[engine.ObjectKey{Kind: k.gvk.Kind, Namespace: mo.GetNamespace(), Name: mo.GetName()}] = mo.GetGeneration()
			}
			u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(item)
			if err != nil {
				return nil, nil, err
			}
			delete(u, "status")
			u["apiVersion"], u["kind"] = k.gvk.GroupVersion().String(), k.gvk.Kind
			if m, ok := u["metadata"].(map[string]any); ok {
				delete(m, "resourceVersion")
				delete(m, "managedFields")
			}
			data, err := json.Marshal(u)
			if err != nil {
				return nil, nil, err
			}
			buf.WriteString("---\n")
			buf.Write(data)
			buf.WriteByte('\n')
		}
	}
	return buf.Bytes(), generations, nil
}

// restoreGenerations puts back the metadata.generation the API holds: the
// loader validates a manifest the way the apiserver handles a create and so
// sets generation to 1 (watch/crdobject.go), but these objects exist and
// may have been changed since, and observedGeneration must follow.
func restoreGenerations(s *engine.Snapshot, gens map[engine.ObjectKey]int64) {
	set := func(kind string, o metav1.Object) {
		if g, ok := gens[engine.ObjectKey{Kind: kind, Namespace: o.GetNamespace(), Name: o.GetName()}]; ok {
			o.SetGeneration(g)
		}
	}
	for _, o := range statusObjects(s) {
		set(o.GetObjectKind().GroupVersionKind().Kind, o)
	}
}

// reportProblems logs the loader's problems when they change: an object
// the apiserver would have refused, or that gwdev cannot load.
func (c *controller) reportProblems(ps []watch.Problem) {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString("  " + p.String() + "\n")
	}
	if s := b.String(); s != c.lastProblems {
		c.lastProblems = s
		if s != "" {
			c.logf("loader problems (these objects are left out):\n%s", s)
		}
	}
}

// reportBind logs the ports the emulator could not bind, when that changes.
func (c *controller) reportBind(rep *emulator.ApplyReport) {
	msg := ""
	if err := rep.Err(); err != nil {
		msg = err.Error()
	}
	if msg != c.lastBind {
		c.lastBind = msg
		if msg != "" {
			c.logf("emulator: %s", msg)
		}
	}
}

// writeStatus writes the status the engine computed for every object that
// has one, when it differs from the stored status other than in
// lastTransitionTime (which the engine sets to Options.Now on every pass).
func (c *controller) writeStatus(ctx context.Context, s *engine.Snapshot) error {
	var failed []string
	for _, obj := range statusObjects(s) {
		if err := c.writeOne(ctx, obj); err != nil {
			if apierrors.IsNotFound(err) {
				continue // deleted since it was read
			}
			failed = append(failed, fmt.Sprintf("%s %s/%s: %v", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetNamespace(), obj.GetName(), err))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("writing status: %s", strings.Join(failed, "; "))
	}
	return nil
}

func (c *controller) writeOne(ctx context.Context, obj client.Object) error {
	gvk := obj.GetObjectKind().GroupVersionKind()
	ro, err := c.api.Scheme().New(gvk)
	if err != nil {
		return err
	}
	cur := ro.(client.Object)
	if err := c.api.Get(ctx, client.ObjectKeyFromObject(obj), cur); err != nil {
		return err
	}
	if cur.GetUID() != obj.GetUID() {
		return nil // deleted and created again since it was read
	}
	// Other controllers' entries in the stored status stay as they are
	// (engine.KeepForeignStatus, the rule a controller writing status
	// follows).
	upd := obj.DeepCopyObject().(client.Object)
	engine.KeepForeignStatus(upd, cur, engine.DefaultControllerName)
	same, err := sameStatus(upd, cur)
	if err != nil || same {
		return err
	}
	// A status update takes only the status; the resourceVersion guards
	// against writing over a newer object.
	upd.SetResourceVersion(cur.GetResourceVersion())
	return c.api.Status().Update(ctx, upd)
}

// sameStatus compares the status of two objects, ignoring
// lastTransitionTime.
func sameStatus(a, b client.Object) (bool, error) {
	ua, err := runtime.DefaultUnstructuredConverter.ToUnstructured(a)
	if err != nil {
		return false, err
	}
	ub, err := runtime.DefaultUnstructuredConverter.ToUnstructured(b)
	if err != nil {
		return false, err
	}
	return reflect.DeepEqual(withoutTransitionTimes(normalise(ua["status"])), withoutTransitionTimes(normalise(ub["status"]))), nil
}

// normalise round-trips v through JSON so that typed and stored forms
// compare equal (int64 vs float64, nil vs absent).
func normalise(v any) any {
	data, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(data, &out)
	return out
}

// withoutTransitionTimes drops every lastTransitionTime, at any depth.
func withoutTransitionTimes(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if k != "lastTransitionTime" {
				out[k] = withoutTransitionTimes(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = withoutTransitionTimes(e)
		}
		return out
	}
	return v
}

// statusObjects lists the objects of a translation result that have a
// status subresource (the Gateway API kinds but ReferenceGrant), each with
// its apiVersion and kind set.
func statusObjects(s *engine.Snapshot) []client.Object {
	var out []client.Object
	s.Each(func(k engine.ObjectKey, o metav1.Object) {
		co, ok := o.(client.Object)
		if g := co.GetObjectKind().GroupVersionKind().Group; ok && (g == gwv1.GroupName || g == engine.ExperimentalGroup) && k.Kind != "ReferenceGrant" {
			out = append(out, co)
		}
	})
	return out
}

// stderrLogf logs controller events to standard error, which go test
// interleaves with the suite's output.
func stderrLogf(format string, args ...any) {
	log.Printf("gwdev-harness: "+format, args...)
}
