package watch

import (
	"maps"
	"reflect"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/gwdev/gwdev/engine"
)

// A loaded object is many small allocations (the typed object, its slices,
// pointers to optional fields, the map of its item lines) made while the
// loader allocates ten times as much that dies with the document:
// unstructured maps, CEL values, field paths. The garbage collector frees
// the garbage but does not move the survivors, so nearly every span of the
// heap keeps a few objects alive: after loading 10,000 HTTPRoutes and
// 20,000 Services, spans holding 90 MB were in use for 48 MB of live data,
// and the process's peak memory grew with them. A large load therefore
// works in batches, and after each one the Collect hook runs the collector
// and the batch's objects are copied: the copies fill the slots the
// collector freed, the originals become garbage, and the spans only they
// kept alive are freed by the next cycle (peak RSS of check for those
// routes: about 170 MB against 195 MB; issue 16).

// compactBatchDocs is the number of documents in a batch of a large load.
// Loads of no more documents are not batched. Each batch costs a
// collection: for 10,000 HTTPRoutes + 20,000 Services, batches of 2,048
// cost 0.1 s more CPU than 4,096 for the same peak RSS (the translation's
// peak is the higher one).
const compactBatchDocs = 4096

// maxCollections is the most batches, and so calls of Collect, in one
// load. A collection marks the whole live heap, which holds every document
// of the load (its job, 48 bytes, even when it loads nothing) whatever the
// batch: one every compactBatchDocs made a load quadratic in documents
// (1,000,000 empty documents: 244 collections over a heap of 120 MB and
// more, 14 s of which 95% was marking; issue 35). With at most this many,
// a load's collections cost a constant times its heap, linear in its
// documents. Loads of up to 16 batches of compactBatchDocs (65,536
// documents: 20,000 HTTPRoutes and their Services) are batched as before;
// at 8, check of a 10 MB file of 34,500 documents peaked about 10 MB
// higher.
const maxCollections = 16

// collectBatch is the number of documents in a batch of a load of docs
// documents (more than compactBatchDocs): compactBatchDocs, or more when
// that would take over maxCollections batches.
func collectBatch(docs int) int {
	return max(compactBatchDocs, (docs+maxCollections-1)/maxCollections)
}

// copier is what every typed Kubernetes object implements.
type copier interface {
	DeepCopyObject() runtime.Object
}

// compact replaces each object in objs, and its map of item lines, with a
// copy. Services with one port share their Ports with the other Services
// of the load whose port is the same (ports); the other objects share
// their optional scalars (scalars).
func compact(objs []loaded, ports *sharedPorts, scalars *sharedScalars) {
	for i := range objs {
		o := &objs[i]
		if svc, ok := o.obj.(*engine.Service); ok {
			o.obj = ports.copyService(svc)
		} else if c, ok := o.obj.(copier); ok {
			if cp, ok := c.DeepCopyObject().(metav1.Object); ok {
				o.obj = cp
				scalars.share(reflect.ValueOf(cp))
			}
		}
		if o.src.Fields != nil {
			o.src.Fields = maps.Clone(o.src.Fields)
		}
	}
}

// sharedPorts hands out one Ports slice for every Service of a load with
// the same single port: a typical folder has thousands of Services that
// each declare {name: http, port: 8080}, and each kept a slice of its own
// (96 bytes; 1.9 MB for bench/genroutes' 20,000 Services, held until check
// ends; issue 42). Loaded objects are never written (the engine and the
// watcher's last-known-good share them already), so neither is a shared
// slice. The zero value is ready; it is not safe for concurrent use.
type sharedPorts struct {
	m map[portKey][]corev1.ServicePort
}

// portKey is a ServicePort's fields, comparable (AppProtocol by value).
type portKey struct {
	name, protocol, appProtocol string
	hasAppProtocol              bool
	port, nodePort              int32
	targetPort                  intstr.IntOrString
}

// copyService returns a deep copy of svc, whose Ports are shared when it
// has one port.
func (s *sharedPorts) copyService(svc *engine.Service) *engine.Service {
	if len(svc.Spec.Ports) != 1 {
		return svc.DeepCopy()
	}
	p := svc.Spec.Ports[0]
	k := portKey{name: p.Name, protocol: string(p.Protocol), port: p.Port, nodePort: p.NodePort, targetPort: p.TargetPort}
	if p.AppProtocol != nil {
		k.appProtocol, k.hasAppProtocol = *p.AppProtocol, true
	}
	shared, ok := s.m[k]
	if !ok {
		shared = slices.Clip(svc.DeepCopy().Spec.Ports)
		if s.m == nil {
			s.m = map[portKey][]corev1.ServicePort{}
		}
		s.m[k] = shared
	}
	return svc.CopyWithPorts(shared, false)
}

// sharedScalars hands out one pointer for every optional scalar field of a
// large load's objects with the same type and value: an HTTPRoute's
// backendRef holds *Group, *Kind, *Namespace, *PortNumber and its weight
// *int32, a path match its *PathMatchType and *string, and each loaded
// object kept a small allocation for each (~2.5 MB for bench/genroutes'
// 10,000 HTTPRoutes; issue 42). As for sharedPorts, loaded objects are
// never written through. The zero value is ready; it is not safe for
// concurrent use.
type sharedScalars struct {
	m map[any]reflect.Value
}

// share replaces, in the object v points to, every pointer to a scalar
// (string, bool, integer, each of any named type) with the shared pointer
// to an equal value, walking structs, pointers to structs and slices;
// maps and unexported fields are left alone.
func (s *sharedScalars) share(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		e := v.Elem()
		switch e.Kind() {
		case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if !v.CanSet() {
				return
			}
			k := e.Interface()
			if p, ok := s.m[k]; ok {
				v.Set(p)
				return
			}
			if s.m == nil {
				s.m = map[any]reflect.Value{}
			}
			s.m[k] = reflect.ValueOf(v.Interface()) // the pointer, not the field holding it
		case reflect.Struct:
			s.share(e)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				s.share(f)
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			s.share(v.Index(i))
		}
	}
}
