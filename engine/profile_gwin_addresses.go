package engine

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// gwin address types. The reference names them with the prefix
// gateway.alb.yc.io/ (spec/001); the current controller uses
// gwin.yandex.cloud/. Both are accepted.
var (
	gwinAutoIPv4Types     = []string{gwinGroup + "/autoIPv4", "gateway.alb.yc.io/autoIPv4"}
	gwinInternalIPv4Types = []string{gwinGroup + "/internalIPv4", "gateway.alb.yc.io/internalIPv4"}
)

// checkAddresses validates spec.addresses as gwin reads them: IPAddress
// (an IPv4 address reserved in the VPC), autoIPv4 with value "auto", and
// internalIPv4 with value "<subnet-id>/<ip|auto>". Cloud addresses are not
// emulated: gwdev serves the Gateway on a loopback address (a loopback
// IPAddress is bound as asked).
func (gwinProfile) checkAddresses(t *translator, g *gatewayState, used map[string]bool) {
	var unusable []string
	defer func() {
		if len(unusable) > 0 {
			g.cond.fail(string(gwv1.GatewayConditionProgrammed), string(gwv1.GatewayReasonAddressNotUsable), strings.Join(unusable, "; "))
		}
	}()
	for i, a := range g.obj.Spec.Addresses {
		typ := string(gwv1.IPAddressType)
		if a.Type != nil {
			typ = string(*a.Type)
		}
		at := fmt.Sprintf("spec.addresses[%d]", i)
		notUsable := func(msg string) { unusable = append(unusable, at+": "+msg) }
		cloud := func(what string) {
			t.noteKind(NoteNotEmulated, SeverityInfo, g.key, at, what+" is a cloud address, not emulated locally: gwdev serves the Gateway on a loopback address")
		}
		switch {
		case typ == string(gwv1.IPAddressType):
			ip, err := netip.ParseAddr(a.Value)
			switch {
			case a.Value == "":
				notUsable("gwin needs the IPv4 address reserved in the VPC as the value of an IPAddress")
			case err != nil || !ip.Is4():
				notUsable(fmt.Sprintf("%q is not an IPv4 address; gwin load balancers have IPv4 addresses", a.Value))
			case ip.IsLoopback() && !used[ip.String()] && g.addr == "":
				g.addr = ip.String()
				used[g.addr] = true
			case ip.IsLoopback():
				notUsable(fmt.Sprintf("%s is already used by another Gateway, or this Gateway already has an address", a.Value))
			default:
				cloud("IPAddress " + a.Value)
			}
		case containsString(gwinAutoIPv4Types, typ):
			if a.Value != "auto" {
				notUsable(fmt.Sprintf("%s value %q is not valid: want auto", typ, a.Value))
				continue
			}
			cloud(typ + " auto")
		case containsString(gwinInternalIPv4Types, typ):
			if why := checkInternalIPv4(a.Value); why != "" {
				notUsable(fmt.Sprintf("%s value %q is not valid: %s", typ, a.Value, why))
				continue
			}
			cloud(typ + " " + a.Value)
		default:
			g.cond.fail(string(gwv1.GatewayConditionAccepted), string(gwv1.GatewayReasonUnsupportedAddress),
				fmt.Sprintf("%s: address type %s is not supported by the gwin profile (gwin supports IPAddress, %s, %s)",
					at, typ, strings.Join(gwinAutoIPv4Types, ", "), strings.Join(gwinInternalIPv4Types, ", ")))
		}
	}
}

// checkInternalIPv4 checks "<subnet-id>/<ip|auto>".
func checkInternalIPv4(v string) string {
	subnet, ip, ok := strings.Cut(v, "/")
	switch {
	case !ok || subnet == "":
		return "want <subnet-id>/<ip> or <subnet-id>/auto"
	case ip == "auto":
		return ""
	}
	if a, err := netip.ParseAddr(ip); err != nil || !a.Is4() {
		return fmt.Sprintf("%q is not an IPv4 address or auto", ip)
	}
	return ""
}

// resolveCertificate resolves a YCCertificate certificateRef from the PEM
// files Options.YCCertificates names: the certificate lives in Yandex
// Certificate Manager, which gwdev cannot reach.
func (gwinProfile) resolveCertificate(t *translator, group, kind, ns, name string) (*Certificate, gwv1.ListenerConditionReason, string, bool) {
	if group != gwinGroup || kind != "YCCertificate" {
		return nil, "", "", false
	}
	ref := ns + "/" + name
	pemPair, found := t.opts.YCCertificates[ref]
	if !found {
		return nil, gwv1.ListenerReasonInvalidCertificateRef,
			fmt.Sprintf("YCCertificate %s is kept in Yandex Certificate Manager, which gwdev cannot reach: give its local PEM files in gwdev.yaml (ycCertificates: {%s: {cert: cert.pem, key: key.pem}})", ref, ref), true
	}
	sec := &corev1.Secret{Data: map[string][]byte{corev1.TLSCertKey: pemPair.CertPEM, corev1.TLSPrivateKeyKey: pemPair.KeyPEM}}
	sec.Namespace, sec.Name = ns, name
	cert, err := parseTLSSecret(sec)
	if err != nil {
		return nil, gwv1.ListenerReasonInvalidCertificateRef, "YCCertificate " + ref + " (local PEM files): " + err.Error(), true
	}
	return cert, "", "", true
}
