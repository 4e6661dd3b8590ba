package engine

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Redacted replaces every Secret value in output: gwdev never prints keys.
const Redacted = "<redacted>"

// redact is RedactSecret (output.go), and a Service's corev1.Service,
// which is what its MarshalJSON renders, without the second copy of its
// JSON that an encoder makes of a Marshaler's.
func redact(o metav1.Object) any { return RedactSecret(asDecoded(o)) }

// RedactSecret returns o, or for a Secret a copy whose values are replaced
// by Redacted and their size: every output of objects (check -o yaml/json,
// the admin API's /status, the dashboard) goes through it. Credentials in
// requests are redacted by the emulator (emulator/redact.go).
func RedactSecret(o metav1.Object) any {
	s, ok := o.(*corev1.Secret)
	if !ok {
		return o
	}
	c := s.DeepCopy()
	c.StringData = nil
	data := map[string]string{}
	for k, v := range s.Data {
		data[k] = Redacted + " (" + itoa(len(v)) + " bytes)"
	}
	c.Data = nil
	type redactedSecret struct {
		corev1.Secret `json:",inline"`
		Data          map[string]string `json:"data,omitempty"`
	}
	return redactedSecret{Secret: *c, Data: data}
}
