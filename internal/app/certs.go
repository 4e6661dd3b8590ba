package app

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
)

// WantedSecret is a Secret a listener references and the folder lacks.
type WantedSecret struct {
	Secret    string // namespace/name
	Namespace string
	Name      string
	Hostnames []string
	// Users are the listeners that reference it.
	Users          []string
	CrossNamespace bool
	// Gateway ("namespace/name") and Port are where the first listener
	// that references it is served.
	Gateway string
	Port    int32
	// CurlHost is the host the curl line of gwdev certs names: one a route
	// attached to that first listener serves (see curlHost).
	CurlHost string
	// CurlServed is false when no route attached to that listener serves
	// CurlHost (none is attached, or none shares its hostname): gwdev up
	// answers it 404 until one does.
	CurlServed bool
}

// MissingCertificates lists the Secrets that HTTPS and TLS Terminate
// listeners reference and the snapshot does not have, with the hostnames
// to sign for each, sorted by namespace/name.
func MissingCertificates(s *engine.Snapshot) []*WantedSecret {
	have := map[string]bool{}
	for _, sec := range s.Secrets {
		have[nsOf(sec.Namespace)+"/"+sec.Name] = true
	}
	wanted := map[string]*WantedSecret{}
	add := func(ownerKind, ns, owner, gateway string, l gwv1.Listener) {
		if l.TLS == nil || !(l.Protocol == gwv1.HTTPSProtocolType ||
			(l.Protocol == gwv1.TLSProtocolType && (l.TLS.Mode == nil || *l.TLS.Mode == gwv1.TLSModeTerminate))) {
			return
		}
		for _, ref := range l.TLS.CertificateRefs {
			if (ref.Group != nil && *ref.Group != "") || (ref.Kind != nil && *ref.Kind != "Secret") {
				continue
			}
			sns := ns
			if ref.Namespace != nil && *ref.Namespace != "" {
				sns = string(*ref.Namespace)
			}
			key := sns + "/" + string(ref.Name)
			if have[key] {
				continue
			}
			w := wanted[key]
			routeHosts, catchAll := listenerRoutes(s, ownerKind, ns, owner, l)
			first := w == nil
			if first {
				w = &WantedSecret{Secret: key, Namespace: sns, Name: string(ref.Name), Gateway: gateway, Port: int32(l.Port)}
				wanted[key] = w
			}
			w.CrossNamespace = w.CrossNamespace || sns != ns
			w.Users = append(w.Users, fmt.Sprintf("%s %s/%s listener %s", ownerKind, ns, owner, l.Name))
			lh := ""
			if l.Hostname != nil {
				lh = string(*l.Hostname)
			}
			if lh != "" {
				w.Hostnames = append(w.Hostnames, lh)
			} else {
				w.Hostnames = append(w.Hostnames, routeHosts...)
			}
			if first {
				w.CurlHost, w.CurlServed = curlHost(lh, routeHosts, catchAll)
			}
		}
	}
	for _, g := range s.Gateways {
		for _, l := range g.Spec.Listeners {
			add("Gateway", nsOf(g.Namespace), g.Name, nsOf(g.Namespace)+"/"+g.Name, l)
		}
	}
	for _, ls := range s.ListenerSets {
		for _, e := range ls.Spec.Listeners {
			pns := nsOf(ls.Namespace)
			if ls.Spec.ParentRef.Namespace != nil && *ls.Spec.ParentRef.Namespace != "" {
				pns = string(*ls.Spec.ParentRef.Namespace)
			}
			add("ListenerSet", nsOf(ls.Namespace), ls.Name, pns+"/"+string(ls.Spec.ParentRef.Name), gwv1.Listener(e))
		}
	}
	out := make([]*WantedSecret, 0, len(wanted))
	for _, w := range wanted {
		sort.Strings(w.Hostnames)
		w.Hostnames = slices.Compact(w.Hostnames)
		if len(w.Hostnames) == 0 {
			w.Hostnames = []string{"localhost"}
		}
		if w.CurlHost == "" {
			w.CurlHost = shortestHost(w.Hostnames)
		} else if w.CurlServed && !certCovers(w.Hostnames, w.CurlHost) {
			// A route's name deeper than the listener's wildcard: sign
			// for it too, so that the curl line works as printed.
			w.Hostnames = append(w.Hostnames, w.CurlHost)
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Secret < out[j].Secret })
	return out
}

// listenerRouteHosts lists the hostnames of the routes that attach to
// listener l of owner (a Gateway or ListenerSet in ns): a parentRef names
// the owner, with no sectionName or l's name and no port or l's port; the
// route's kind is one the protocol carries (HTTPRoute and GRPCRoute on
// HTTPS, TLSRoute on TLS) and its namespace one allowedRoutes admits
// (Same by default; a selector is taken as admitting). A hostname of a
// route attached to another listener is never signed for this one.
func listenerRouteHosts(s *engine.Snapshot, ownerKind, ns, owner string, l gwv1.Listener) []string {
	hosts, _ := listenerRoutes(s, ownerKind, ns, owner, l)
	return hosts
}

// listenerRoutes is listenerRouteHosts, and whether a route without
// hostnames (one that serves every host of the listener) attaches.
func listenerRoutes(s *engine.Snapshot, ownerKind, ns, owner string, l gwv1.Listener) (hosts []string, catchAll bool) {
	kinds := map[string]bool{}
	for _, k := range engine.RouteKindsFor(l.Protocol) {
		kinds[k] = true
	}
	from := gwv1.NamespacesFromSame
	if l.AllowedRoutes != nil && l.AllowedRoutes.Namespaces != nil && l.AllowedRoutes.Namespaces.From != nil {
		from = *l.AllowedRoutes.Namespaces.From
	}
	s.EachRoute(func(r engine.Route) {
		rns := nsOf(r.Object().GetNamespace())
		if !kinds[r.Key().Kind] || from == gwv1.NamespacesFromSame && rns != ns || from == gwv1.NamespacesFromNone {
			return
		}
		for _, p := range r.ParentRefs() {
			kind := "Gateway"
			if p.Kind != nil {
				kind = string(*p.Kind)
			}
			pns := rns
			if p.Namespace != nil && *p.Namespace != "" {
				pns = string(*p.Namespace)
			}
			if kind != ownerKind || pns != ns || string(p.Name) != owner ||
				p.SectionName != nil && *p.SectionName != "" && *p.SectionName != l.Name ||
				p.Port != nil && *p.Port != l.Port {
				continue
			}
			for _, h := range r.Hostnames() {
				hosts = append(hosts, string(h))
			}
			catchAll = catchAll || len(r.Hostnames()) == 0
			return
		}
	})
	return hosts, catchAll
}

// curlHost chooses the host to curl on a listener (hostname listener, ""
// for any) from the hostnames of the routes attached to it: a concrete
// hostname a route serves (the shortest, then the first by name), else one
// derived from a route's wildcard ("www." in place of "*"), else, when a
// route without hostnames attaches, the listener's own; served is false
// when no attached route serves the host ("" then: the caller names the
// certificate's shortest name).
func curlHost(listener string, routeHosts []string, catchAll bool) (host string, served bool) {
	var concrete, wild []string
	for _, rh := range routeHosts {
		h, ok := engine.HostnameIntersection(listener, rh)
		switch {
		case !ok:
		case strings.HasPrefix(h, "*."):
			wild = append(wild, h)
		default:
			concrete = append(concrete, h)
		}
	}
	switch {
	case len(concrete) > 0:
		return shortestHost(concrete), true
	case len(wild) > 0:
		return shortestHost(wild), true
	case catchAll && listener != "":
		return shortestHost([]string{listener}), true
	}
	return "", false
}

// certCovers reports whether a certificate for names is valid for host:
// an equal name, or a "*." wildcard standing for exactly its first label.
func certCovers(names []string, host string) bool {
	for _, n := range names {
		if strings.EqualFold(n, host) {
			return true
		}
		if rest, ok := strings.CutPrefix(n, "*"); ok {
			if label, ok := strings.CutSuffix(strings.ToLower(host), strings.ToLower(rest)); ok && label != "" && !strings.Contains(label, ".") {
				return true
			}
		}
	}
	return false
}

// shortestHost is the name with the fewest labels (app.example.com before
// admin.app.example.com), the first by name among equals, a wildcard
// "*.rest" as "www.rest".
func shortestHost(names []string) string {
	host := ""
	for _, h := range slices.Sorted(slices.Values(names)) {
		if host == "" || strings.Count(h, ".") < strings.Count(host, ".") {
			host = h
		}
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		host = "www." + rest
	}
	return host
}

func nsOf(ns string) string {
	if ns == "" {
		return "default"
	}
	return ns
}

// LocalCA is gwdev's certificate authority on this machine.
type LocalCA struct {
	cert     *x509.Certificate
	key      crypto.Signer
	CertPath string
}

// LoadOrCreateCA reads ca.crt and ca.key from dir, or creates them: the
// directory 0700, the key 0600.
func LoadOrCreateCA(dir string) (*LocalCA, bool, error) {
	certPath, keyPath := filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
	crt, err1 := os.ReadFile(certPath)
	key, err2 := os.ReadFile(keyPath)
	switch {
	case err1 == nil && err2 == nil:
		pair, err := tls.X509KeyPair(crt, key)
		if err != nil {
			return nil, false, fmt.Errorf("the local CA in %s is unusable (%v): remove the directory to create a new one", dir, err)
		}
		signer, ok := pair.PrivateKey.(crypto.Signer)
		if !ok || pair.Leaf == nil || !pair.Leaf.IsCA {
			return nil, false, fmt.Errorf("the local CA in %s is not a CA certificate: remove the directory to create a new one", dir)
		}
		return &LocalCA{cert: pair.Leaf, key: signer, CertPath: certPath}, false, nil
	case !errors.Is(err1, fs.ErrNotExist) && err1 != nil:
		return nil, false, fmt.Errorf("reading the local CA: %w", err1)
	case !errors.Is(err2, fs.ErrNotExist) && err2 != nil:
		return nil, false, fmt.Errorf("reading the local CA: %w", err2)
	case err1 == nil || err2 == nil:
		return nil, false, fmt.Errorf("the local CA in %s is incomplete (ca.crt and ca.key must both exist): remove the directory to create a new one", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("creating %s: %w", dir, err)
	}
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, false, err
	}
	name := "gwdev local CA"
	if u := os.Getenv("USER"); u != "" {
		name += " (" + u + ")"
	}
	now := time.Now()
	tmpl := &x509.Certificate{SerialNumber: randomSerial(), Subject: pkix.Name{CommonName: name, Organization: []string{"gwdev"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0), IsCA: true, BasicConstraintsValid: true,
		MaxPathLenZero: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		return nil, false, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, false, err
	}
	// The key first, so that a CA certificate never exists without it.
	if err := writeNew(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		return nil, false, err
	}
	if err := writeNew(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return nil, false, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, false, err
	}
	return &LocalCA{cert: cert, key: k, CertPath: certPath}, true, nil
}

// writeNew creates path with mode perm; it fails if path exists.
func writeNew(path string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func randomSerial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return n
}

// Issue signs a serving certificate for hostnames with a new ECDSA key and
// returns the PEM certificate chain and PEM key.
func (ca *LocalCA) Issue(hostnames []string, validity time.Duration) (crt, key []byte, notAfter time.Time, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	now := time.Now()
	notAfter = now.Add(validity)
	if notAfter.After(ca.cert.NotAfter) {
		notAfter = ca.cert.NotAfter
	}
	tmpl := &x509.Certificate{SerialNumber: randomSerial(), Subject: pkix.Name{CommonName: hostnames[0], Organization: []string{"gwdev"}},
		DNSNames: hostnames, NotBefore: now.Add(-time.Hour), NotAfter: notAfter,
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &k.PublicKey, ca.key)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	kder, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	crt = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	crt = append(crt, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})...)
	return crt, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), notAfter, nil
}

// WriteSecretManifest writes one kubernetes.io/tls Secret document.
func WriteSecretManifest(w *bytes.Buffer, s *WantedSecret, crt, key []byte) {
	fmt.Fprintf(w, "---\n# For %s; signed by the local gwdev CA, for local testing.\n", strings.Join(s.Hostnames, ", "))
	fmt.Fprintf(w, "apiVersion: v1\nkind: Secret\nmetadata:\n  name: %s\n", s.Name)
	if s.Namespace != "default" {
		fmt.Fprintf(w, "  namespace: %s\n", s.Namespace)
	}
	fmt.Fprintf(w, "type: kubernetes.io/tls\ndata:\n  tls.crt: %s\n  tls.key: %s\n",
		base64.StdEncoding.EncodeToString(crt), base64.StdEncoding.EncodeToString(key))
}

// AppendManifests adds docs to path: a new file starts with the header; an
// existing one must be gwdev's (it starts with the header), never the
// user's.
func AppendManifests(path, caPath string, docs []byte) error {
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		head := fmt.Sprintf("%s: Secrets for listeners whose certificateRefs named a missing Secret.\n"+
			CAHeaderPrefix+"%s (trust it: curl --cacert %s).\n# Keep the file, or delete it and run gwdev certs again.\n",
			CertsHeader, caPath, caPath)
		return writeNew(path, append([]byte(head), docs...), 0o600)
	case err != nil:
		return err
	case !bytes.HasPrefix(old, []byte(CertsHeader)):
		return fmt.Errorf("%s exists and was not written by gwdev certs: not touching it (use --out FILE)", path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	if _, err := f.Write(docs); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
