package gwin

import (
	"fmt"
	"net/netip"
	"strings"

	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine"
)

// gwin address types. The reference names them with the prefix
// gateway.alb.yc.io/ (spec/001); the current controller uses
// gwin.yandex.cloud/. Both are accepted.
var (
	gwinAutoIPv4Types     = []string{Group + "/autoIPv4", "gateway.alb.yc.io/autoIPv4"}
	gwinInternalIPv4Types = []string{Group + "/internalIPv4", "gateway.alb.yc.io/internalIPv4"}
)

// CheckAddresses validates spec.addresses as gwin reads them: IPAddress
// (an IPv4 address reserved in the VPC), autoIPv4 with value "auto", and
// internalIPv4 with value "<subnet-id>/<ip|auto>". Cloud addresses are not
// emulated: gwdev serves the Gateway on a loopback address (a loopback
// IPAddress is bound as asked).
func (rn *run) CheckAddresses(g *engine.GatewayView, used map[string]bool) {
	var unusable []string
	defer func() {
		if len(unusable) > 0 {
			g.Fail(string(gwv1.GatewayConditionProgrammed), string(gwv1.GatewayReasonAddressNotUsable), strings.Join(unusable, "; "))
		}
	}()
	for i, a := range g.Object().Spec.Addresses {
		typ := string(gwv1.IPAddressType)
		if a.Type != nil {
			typ = string(*a.Type)
		}
		at := fmt.Sprintf("spec.addresses[%d]", i)
		notUsable := func(msg string) { unusable = append(unusable, at+": "+msg) }
		cloud := func(what string) {
			rn.tr.NoteKind(engine.NoteNotEmulated, engine.SeverityInfo, g.Key(), at, what+" is a cloud address, not emulated locally: gwdev serves the Gateway on a loopback address")
		}
		switch {
		case typ == string(gwv1.IPAddressType):
			ip, err := netip.ParseAddr(a.Value)
			switch {
			case a.Value == "":
				notUsable("gwin needs the IPv4 address reserved in the VPC as the value of an IPAddress")
			case err != nil || !ip.Is4():
				notUsable(fmt.Sprintf("%q is not an IPv4 address; gwin load balancers have IPv4 addresses", a.Value))
			case ip.IsLoopback() && !used[ip.String()] && g.Address() == "":
				g.SetAddress(ip.String())
				used[ip.String()] = true
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
			g.Fail(string(gwv1.GatewayConditionAccepted), string(gwv1.GatewayReasonUnsupportedAddress),
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

// ResolveCertificate resolves a YCCertificate certificateRef from the PEM
// files the profile's Options.YCCertificates names: the certificate lives
// in Yandex Certificate Manager, which gwdev cannot reach.
func (rn *run) ResolveCertificate(group, kind, ns, name string) (*engine.Certificate, gwv1.ListenerConditionReason, string, bool) {
	if group != Group || kind != "YCCertificate" {
		return nil, "", "", false
	}
	ref := ns + "/" + name
	pemPair, found := optionsOf(rn.tr.ProfileOptions()).YCCertificates[ref]
	if !found {
		return nil, gwv1.ListenerReasonInvalidCertificateRef,
			fmt.Sprintf("YCCertificate %s is kept in Yandex Certificate Manager, which gwdev cannot reach: give its local PEM files in gwdev.yaml (ycCertificates: {%s: {cert: cert.pem, key: key.pem}})", ref, ref), true
	}
	cert, err := engine.CertificateFromPEM(ns, name, pemPair.CertPEM, pemPair.KeyPEM)
	if err != nil {
		return nil, gwv1.ListenerReasonInvalidCertificateRef, "YCCertificate " + ref + " (local PEM files): " + err.Error(), true
	}
	return cert, "", "", true
}
