package ingressnginx

import (
	"maps"
	"net/textproto"
	"slices"

	"github.com/gwdev/gwdev/engine/table"
)

// This file is the header family: custom-headers (response headers
// from a ConfigMap, which ingress-nginx's more_set_headers writes) and
// textprotoCanonical, the header name as the table keeps it.

// ingressCustomHeaders reads the ConfigMap custom-headers names
// ("namespace/name", or a name in the Ingress's namespace): its entries are
// set on every response (more_set_headers). A ConfigMap that is missing or
// in another namespace makes ingress-nginx deny the location (503): denied
// says why.
func (t *translator) ingressCustomHeaders(st *ingressState, ref string, warn func(name, msg string)) (hs []table.Header, denied string) {
	ns, name, ok := t.ingressRef(st, "custom-headers", ref)
	if !ok {
		return nil, AnnotationPrefix + "custom-headers: ConfigMap " + ref + " is in another namespace"
	}
	cm := t.tr.ConfigMap(ns, name)
	if cm == nil {
		warn("custom-headers", "ConfigMap "+ns+"/"+name+" not found: ingress-nginx denies the location with 503, and so does gwdev")
		return nil, AnnotationPrefix + "custom-headers: ConfigMap " + ns + "/" + name + " not found"
	}
	hs = []table.Header{}
	for _, k := range slices.Sorted(maps.Keys(cm.Data)) {
		hs = append(hs, table.Header{Name: textprotoCanonical(k), Value: cm.Data[k]})
	}
	return hs, ""
}

// textprotoCanonical is a header name as the table keeps it.
func textprotoCanonical(name string) string { return textproto.CanonicalMIMEHeaderKey(name) }
