package engine

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Front ends. A front end reads objects of an API other than the Gateway
// API (Ingresses, for ingress-nginx) and serves them beside the Gateways:
// it adds Gateway-like entries (GatewayTable) to the routing table and
// findings about its objects. Like a profile it is a plug-in, a package of
// its own (engine/ingressnginx) that registers itself with
// RegisterFrontEnd from its init function; the engine hands it a
// Translation, never the translator. Registration happens only at init:
// afterwards frontEnds is read-only, so translation stays deterministic.

// FrontEnd is a front end.
type FrontEnd interface {
	// Name is the front end's name ("ingress-nginx").
	Name() string
	// Start begins the front end's part of one translation; it is called
	// once per translation, after the Gateway API objects are processed.
	Start(tr *Translation) FrontEndRun
}

// FrontEndRun is a front end's state during one translation.
type FrontEndRun interface {
	// Process reads the front end's objects (which it serves, their
	// settings) and reports about them; it runs before status is written.
	Process()
	// Tables are the front end's entries of the routing table, built once
	// the Gateways and the mesh have their addresses.
	Tables() []*GatewayTable
}

// frontEnds are the registered front ends, sorted by name.
var frontEnds []FrontEnd

// RegisterFrontEnd adds a front end; a front-end package calls it from its
// init function. It panics on a second front end of the same name.
func RegisterFrontEnd(f FrontEnd) {
	for _, g := range frontEnds {
		if g.Name() == f.Name() {
			panic("engine: front end " + f.Name() + " registered twice")
		}
	}
	frontEnds = append(frontEnds, f)
	slices.SortFunc(frontEnds, func(a, b FrontEnd) int { return strings.Compare(a.Name(), b.Name()) })
}

// processFrontEnds starts every registered front end and processes its
// objects.
func (t *translator) processFrontEnds() {
	for _, f := range frontEnds {
		run := f.Start(&Translation{t: t})
		run.Process()
		t.frontEnds = append(t.frontEnds, run)
	}
}

// frontEndTables are the front ends' entries of the routing table.
func (t *translator) frontEndTables() []*GatewayTable {
	var out []*GatewayTable
	for _, run := range t.frontEnds {
		out = append(out, run.Tables()...)
	}
	return out
}

// NewTranslation is a translation of snap that has processed nothing yet,
// for a front end that writes its own configuration from the objects (the
// nginx.conf of a differential test) without translating them.
func NewTranslation(snap *Snapshot, opts Options) *Translation {
	if snap == nil {
		snap = &Snapshot{}
	}
	return &Translation{t: newTranslator(snap, opts)}
}

// Service is the Service ns/name of the output (nil: none).
func (tr *Translation) Service(ns, name string) *Service {
	return tr.t.service(ns, name)
}

// Secret is the Secret ns/name of the output (nil: none).
func (tr *Translation) Secret(ns, name string) *corev1.Secret { return tr.t.secrets[nsName{ns, name}] }

// ConfigMap is the ConfigMap ns/name of the output (nil: none).
func (tr *Translation) ConfigMap(ns, name string) *corev1.ConfigMap {
	return tr.t.configMaps[nsName{ns, name}]
}

// EndpointSlices are the EndpointSlices of the Service ns/name.
func (tr *Translation) EndpointSlices(ns, service string) []*discoveryv1.EndpointSlice {
	return tr.t.endpointSlices[nsName{ns, service}]
}

// ServiceBackend is a backend named name+"/backend/0" that is the
// Service's port sp, with its endpoints resolved as a route's backend's.
func (tr *Translation) ServiceBackend(name string, svc *Service, sp corev1.ServicePort) *Backend {
	return tr.t.serviceItself(name, svc, sp)
}

// Source is where an object was read from.
func (tr *Translation) Source(k ObjectKey) Source { return tr.t.source(k) }

// SourceAt is where a field of an object was read from (the object's own
// line when the field's is unknown).
func (tr *Translation) SourceAt(k ObjectKey, path string) Source { return tr.t.sourceAt(k, path) }

// LoopbackAddresses gives each of keys (in order) a loopback address,
// away from the addresses already assigned (Gateways, mesh, earlier
// keys): the one the key had in the previous translation when still free,
// else the next free one from loopback counter first (n is
// 127.0.<n/254>.<n%254>). The result keeps the assignment for the next
// translation.
func (tr *Translation) LoopbackAddresses(keys []string, first int) []string {
	t := tr.t
	used := map[string]bool{}
	for _, a := range t.addresses {
		used[a] = true
	}
	if t.addresses == nil {
		t.addresses = map[string]string{}
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		if prev := t.opts.previous[k]; prev != "" && !used[prev] {
			out[i] = prev
			used[prev] = true
			t.addresses[k] = prev
		}
	}
	next := first
	for i, k := range keys {
		if out[i] == "" {
			out[i] = freeLoopback(used, &next)
			t.addresses[k] = out[i]
		}
	}
	return out
}

// CertificateFromSecret parses a kubernetes.io/tls Secret as a listener's
// certificateRef is parsed.
func CertificateFromSecret(sec *corev1.Secret) (*Certificate, error) { return parseTLSSecret(sec) }

// CompareOlder orders objects oldest first, then by namespace/name: -1
// when a sorts first, 1 when b does, 0 when neither does.
func CompareOlder(a, b metav1.Object) int { return compareOlder(a, b) }

// SpeaksH2C reports whether a Service port's appProtocol asks for HTTP/2
// without TLS (prior knowledge): kubernetes.io/h2c, h2c or grpc, in any
// case.
func SpeaksH2C(appProtocol string) bool { return speaksH2C(appProtocol) }

// Quote is s in double quotes, escaped as Go does, as findings quote
// values.
func Quote(s string) string { return quote(s) }

// HostnameLess orders hostnames by precedence: exact before wildcard, more
// labels before fewer, "" (any) last; ties broken alphabetically.
func HostnameLess(a, b string) bool { return hostnameLess(a, b) }
