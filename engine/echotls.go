package engine

// EchoTLSSecretAnnotation, on a Service, names a kubernetes.io/tls Secret in
// the Service's namespace whose certificate gwdev's echo backend serves when
// it is reached over TLS: from a BackendTLSPolicy, or through a TLS
// passthrough listener. Without it the echo backend serves a certificate it
// generates, which no CA the user has trusts.
const EchoTLSSecretAnnotation = "gwdev.dev/echo-tls-secret"

// echoTarget is the echo backend of a Service port, with the certificate the
// Service's EchoTLSSecretAnnotation names, if any.
func (t *translator) echoTarget(svc *Service, port int32) *Target {
	tg := &Target{Kind: TargetEcho, Why: "no mapping, EndpointSlice or ExternalName for " + svc.Namespace + "/" + svc.Name + ":" + itoa(int(port)) + ": gwdev's echo backend answers",
		EchoAuthHeader: svc.Annotations[EchoAuthHeaderAnnotation]}
	name := svc.Annotations[EchoTLSSecretAnnotation]
	if name == "" {
		return tg
	}
	k := ObjectKey{Kind: "Service", Namespace: svc.Namespace, Name: svc.Name}
	scope := "metadata.annotations[" + EchoTLSSecretAnnotation + "]"
	sec := t.secrets[nsName{svc.Namespace, name}]
	if sec == nil {
		t.noteKind(NoteEchoTLSGenerated, SeverityWarning, k, scope, "Secret "+svc.Namespace+"/"+name+" not found: the echo backend serves a generated certificate over TLS")
		return tg
	}
	cert, err := parseTLSSecret(sec)
	if err != nil {
		t.noteKind(NoteEchoTLSGenerated, SeverityWarning, k, scope, "Secret "+svc.Namespace+"/"+name+": "+err.Error()+": the echo backend serves a generated certificate over TLS")
		return tg
	}
	tg.EchoTLS = cert
	return tg
}
