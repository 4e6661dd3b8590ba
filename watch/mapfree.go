package watch

// A validated Gateway API object is read into its Go type (decodeTyped) and
// its unstructured form, some 40 maps for one of bench/genroutes'
// HTTPRoutes, is garbage from then on: ~5 KB a route, for a collector that
// marks the whole growing load at every cycle. The loader gives those maps
// back to its worker's mapFreeList, and the converter takes the next
// document's maps from there; a core object's (a Service's), decoded by a
// copy, too. The lists live as long as one load.

// maxFreeMaps bounds a free list (a few hundred bytes a map).
const maxFreeMaps = 1024

// mapFreeList holds cleared maps for toUnstructured to fill again. The
// zero value is ready; a nil list hands out new maps and keeps none. It is
// not safe for concurrent use (one per worker of a load, in loadFiles).
type mapFreeList struct {
	maps []map[string]any
}

// get returns an empty map: a free one, or a new one sized for hint.
func (f *mapFreeList) get(hint int) map[string]any {
	if f == nil || len(f.maps) == 0 {
		return make(map[string]any, hint)
	}
	m := f.maps[len(f.maps)-1]
	f.maps[len(f.maps)-1] = nil
	f.maps = f.maps[:len(f.maps)-1]
	return m
}

// recycle clears the maps of v, the unstructured form of an object, and
// keeps them while there is room. Nothing may refer to v or to anything in
// it afterwards (strings excepted: they are never changed).
func (f *mapFreeList) recycle(v any) {
	switch v := v.(type) {
	case map[string]any:
		for _, x := range v {
			f.recycle(x)
		}
		if len(f.maps) < maxFreeMaps {
			clear(v)
			f.maps = append(f.maps, v)
		}
	case []any:
		for _, x := range v {
			f.recycle(x)
		}
	}
}
