package watch

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
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
// copy.
func compact(objs []loaded) {
	for i := range objs {
		o := &objs[i]
		if c, ok := o.obj.(copier); ok {
			if cp, ok := c.DeepCopyObject().(metav1.Object); ok {
				o.obj = cp
			}
		}
		if o.src.Fields != nil {
			o.src.Fields = maps.Clone(o.src.Fields)
		}
	}
}
