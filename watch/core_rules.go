package watch

import (
	"encoding/pem"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gwdev/gwdev/engine"
)

// This file holds the hand-written part of validation: the apiserver's
// defaults and rules for core kinds that matter to gwdev (the full rules live
// in k8s.io/kubernetes, which is not importable). Wording follows the
// apiserver's.

// maxDataSize is the apiserver's limit on Secret and ConfigMap data (1 MiB).
const maxDataSize = 1 << 20

var (
	supportedProtocols   = []string{string(corev1.ProtocolTCP), string(corev1.ProtocolUDP), string(corev1.ProtocolSCTP)}
	supportedServiceType = []string{string(corev1.ServiceTypeClusterIP), string(corev1.ServiceTypeNodePort), string(corev1.ServiceTypeLoadBalancer), string(corev1.ServiceTypeExternalName)}
)

// defaultService applies SetDefaults_Service: type ClusterIP, session
// affinity None, port protocol TCP and targetPort equal to port.
func defaultService(s *corev1.Service) {
	if s.Spec.Type == "" {
		s.Spec.Type = corev1.ServiceTypeClusterIP
	}
	if s.Spec.SessionAffinity == "" {
		s.Spec.SessionAffinity = corev1.ServiceAffinityNone
	}
	for i := range s.Spec.Ports {
		p := &s.Spec.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == intstr.FromInt32(0) || p.TargetPort == intstr.FromString("") {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	s.Status = corev1.ServiceStatus{}
}

// validateService checks the Service type, ports (range, protocol, names,
// targetPort) and externalName.
func validateService(s *corev1.Service) field.ErrorList {
	var errs field.ErrorList
	specPath := field.NewPath("spec")
	if !sets.New(supportedServiceType...).Has(string(s.Spec.Type)) {
		errs = append(errs, field.NotSupported(specPath.Child("type"), s.Spec.Type, supportedServiceType))
	}
	headless := s.Spec.ClusterIP == corev1.ClusterIPNone
	if len(s.Spec.Ports) == 0 && !headless && s.Spec.Type != corev1.ServiceTypeExternalName {
		errs = append(errs, field.Required(specPath.Child("ports"), ""))
	}
	names := sets.New[string]()
	for i, p := range s.Spec.Ports {
		idx := specPath.Child("ports").Index(i)
		if len(s.Spec.Ports) > 1 && p.Name == "" {
			errs = append(errs, field.Required(idx.Child("name"), ""))
		} else if p.Name != "" {
			for _, msg := range validation.IsDNS1123Label(p.Name) {
				errs = append(errs, field.Invalid(idx.Child("name"), p.Name, msg))
			}
			if names.Has(p.Name) {
				errs = append(errs, field.Duplicate(idx.Child("name"), p.Name))
			}
			names.Insert(p.Name)
		}
		for _, msg := range validation.IsValidPortNum(int(p.Port)) {
			errs = append(errs, field.Invalid(idx.Child("port"), p.Port, msg))
		}
		if !sets.New(supportedProtocols...).Has(string(p.Protocol)) {
			errs = append(errs, field.NotSupported(idx.Child("protocol"), p.Protocol, supportedProtocols))
		}
		if p.TargetPort != intstr.FromInt32(p.Port) { // defaulted from port: reported there
			errs = append(errs, validatePortNumOrName(p.TargetPort, idx.Child("targetPort"))...)
		}
	}
	if s.Spec.Type == corev1.ServiceTypeExternalName {
		name := strings.TrimSuffix(s.Spec.ExternalName, ".")
		if name == "" {
			errs = append(errs, field.Required(specPath.Child("externalName"), ""))
		} else {
			for _, msg := range validation.IsDNS1123Subdomain(name) {
				errs = append(errs, field.Invalid(specPath.Child("externalName"), s.Spec.ExternalName, msg))
			}
		}
	}
	return errs
}

func validatePortNumOrName(p intstr.IntOrString, path *field.Path) field.ErrorList {
	var msgs []string
	if p.Type == intstr.Int {
		msgs = validation.IsValidPortNum(p.IntValue())
	} else {
		msgs = validation.IsValidPortName(p.StrVal)
	}
	var errs field.ErrorList
	for _, msg := range msgs {
		errs = append(errs, field.Invalid(path, p.String(), msg))
	}
	return errs
}

// defaultSecret applies the apiserver's type default (Opaque) and merges
// stringData into data, as the apiserver does on write.
func defaultSecret(s *corev1.Secret) {
	if s.Type == "" {
		s.Type = corev1.SecretTypeOpaque
	}
	if len(s.StringData) > 0 {
		if s.Data == nil {
			s.Data = map[string][]byte{}
		}
		for k, v := range s.StringData {
			s.Data[k] = []byte(v)
		}
	}
	s.StringData = nil
}

// validateSecret checks data keys, the 1 MiB limit and the keys that
// kubernetes.io/tls Secrets must have.
func validateSecret(s *corev1.Secret) field.ErrorList {
	dataPath := field.NewPath("data")
	errs := validateDataKeys(dataPath, keysOf(s.Data), dataSize(s.Data))
	if s.Type == corev1.SecretTypeTLS {
		for _, key := range []string{corev1.TLSCertKey, corev1.TLSPrivateKeyKey} {
			if _, ok := s.Data[key]; !ok {
				errs = append(errs, field.Required(dataPath.Key(key), ""))
			}
		}
	}
	return errs
}

// validateConfigMap checks keys, keys present in both data and binaryData
// and the 1 MiB limit.
func validateConfigMap(c *corev1.ConfigMap) field.ErrorList {
	size := 0
	for _, v := range c.Data {
		size += len(v)
	}
	size += dataSize(c.BinaryData)
	errs := validateDataKeys(field.NewPath("data"), keysOf(c.Data), size)
	errs = append(errs, validateDataKeys(field.NewPath("binaryData"), keysOf(c.BinaryData), 0)...)
	for _, k := range sortedKeys(c.BinaryData) {
		if _, dup := c.Data[k]; dup {
			errs = append(errs, field.Invalid(field.NewPath("binaryData").Key(k), k, "duplicate of key present in data"))
		}
	}
	return errs
}

func validateDataKeys(path *field.Path, keys []string, size int) field.ErrorList {
	var errs field.ErrorList
	for _, k := range keys {
		for _, msg := range validation.IsConfigMapKey(k) {
			errs = append(errs, field.Invalid(path.Key(k), k, msg))
		}
	}
	if size > maxDataSize {
		errs = append(errs, field.TooLong(path, "", maxDataSize))
	}
	return errs
}

func keysOf[V any](m map[string]V) []string { return sortedKeys(m) }

func dataSize(m map[string][]byte) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}

// defaultNamespace sets the phase the apiserver gives a new Namespace.
func defaultNamespace(n *corev1.Namespace) {
	n.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
}

// defaultEndpointSlice applies SetDefaults_EndpointPort: protocol TCP.
func defaultEndpointSlice(e *discoveryv1.EndpointSlice) {
	for i := range e.Ports {
		if e.Ports[i].Protocol == nil {
			tcp := corev1.ProtocolTCP
			e.Ports[i].Protocol = &tcp
		}
	}
}

// validateEndpointSlice checks addressType, endpoint addresses and ports.
func validateEndpointSlice(e *discoveryv1.EndpointSlice) field.ErrorList {
	var errs field.ErrorList
	types := []string{string(discoveryv1.AddressTypeIPv4), string(discoveryv1.AddressTypeIPv6), string(discoveryv1.AddressTypeFQDN)}
	switch {
	case e.AddressType == "":
		errs = append(errs, field.Required(field.NewPath("addressType"), ""))
	case !sets.New(types...).Has(string(e.AddressType)):
		errs = append(errs, field.NotSupported(field.NewPath("addressType"), e.AddressType, types))
	}
	for i, ep := range e.Endpoints {
		path := field.NewPath("endpoints").Index(i).Child("addresses")
		if len(ep.Addresses) == 0 {
			errs = append(errs, field.Required(path, "must contain at least 1 address"))
		}
		for j, a := range ep.Addresses {
			if msg := checkAddress(e.AddressType, a); msg != "" {
				errs = append(errs, field.Invalid(path.Index(j), a, msg))
			}
		}
	}
	names := sets.New[string]()
	for i, p := range e.Ports {
		path := field.NewPath("ports").Index(i)
		if p.Port != nil {
			for _, msg := range validation.IsValidPortNum(int(*p.Port)) {
				errs = append(errs, field.Invalid(path.Child("port"), *p.Port, msg))
			}
		}
		if p.Protocol != nil && !sets.New(supportedProtocols...).Has(string(*p.Protocol)) {
			errs = append(errs, field.NotSupported(path.Child("protocol"), *p.Protocol, supportedProtocols))
		}
		if p.Name != nil {
			if *p.Name != "" {
				for _, msg := range validation.IsDNS1123Label(*p.Name) {
					errs = append(errs, field.Invalid(path.Child("name"), *p.Name, msg))
				}
			}
			if names.Has(*p.Name) {
				errs = append(errs, field.Duplicate(path.Child("name"), *p.Name))
			}
			names.Insert(*p.Name)
		}
	}
	return errs
}

func checkAddress(t discoveryv1.AddressType, a string) string {
	switch t {
	case discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
		ip, err := netip.ParseAddr(a)
		if err != nil {
			return "must be a valid IP address"
		}
		if t == discoveryv1.AddressTypeIPv4 && !ip.Is4() {
			return "must be an IPv4 address"
		}
		if t == discoveryv1.AddressTypeIPv6 && (!ip.Is6() || ip.Is4In6()) {
			return "must be an IPv6 address"
		}
	case discoveryv1.AddressTypeFQDN:
		if msgs := validation.IsDNS1123Subdomain(a); len(msgs) > 0 {
			return fmt.Sprint(strings.Join(msgs, "; "))
		}
	}
	return ""
}

// validateClusterTrustBundle checks what the apiserver checks of
// spec.trustBundle: at least one PEM certificate, every block a CERTIFICATE
// that parses. (signerName's format rules are not checked: gwdev does not
// use it.)
func validateClusterTrustBundle(b *certificatesv1.ClusterTrustBundle) field.ErrorList {
	p := field.NewPath("spec", "trustBundle")
	rest := []byte(b.Spec.TrustBundle)
	n := 0
	for {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			return field.ErrorList{field.Invalid(p, "<omitted>", "entry "+strconv.Itoa(n)+" has bad block type "+blk.Type)}
		}
		n++
	}
	if n == 0 {
		return field.ErrorList{field.Invalid(p, "<omitted>", "at least one trust anchor must be provided")}
	}
	if _, err := engine.ParsePEMCertificates([]byte(b.Spec.TrustBundle)); err != nil {
		return field.ErrorList{field.Invalid(p, "<omitted>", err.Error())}
	}
	return nil
}
