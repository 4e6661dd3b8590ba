package engine

import (
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/gwdev/gwdev/engine/table"
)

// The spec values the routing table carries are copied into package table's
// plain types by the generated to* functions (table_convert_gen.go, made by
// engine/table/gen from the Gateway API types, field for field); these
// convert the lists.

// toSubjectAltNames copies subject alternative names into the table's types.
func toSubjectAltNames(in []gwv1.SubjectAltName) []table.SubjectAltName {
	if in == nil {
		return nil
	}
	out := make([]table.SubjectAltName, len(in))
	for i := range in {
		out[i] = *toSubjectAltName(&in[i])
	}
	return out
}
