package engine

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// negativePolarity lists the condition types that report a problem when
// True (the others report one when False or Unknown). It is the only such
// list: every package asks NegativePolarity, ConditionIsProblem or
// ConditionSeverity.
var negativePolarity = map[string]bool{
	string(gwv1.ListenerConditionConflicted):                    true, // listeners and policies
	string(gwv1.ListenerConditionOverlappingTLSConfig):          true,
	string(gwv1.RouteConditionPartiallyInvalid):                 true,
	string(gwv1.GatewayConditionInsecureFrontendValidationMode): true,
}

// NegativePolarity reports whether a condition of this type says something
// is wrong when True (Conflicted, OverlappingTLSConfig, PartiallyInvalid,
// InsecureFrontendValidationMode); the other types say so when not True.
func NegativePolarity(conditionType string) bool { return negativePolarity[conditionType] }

// ConditionIsProblem reports whether a condition of this type and status
// ("True", "False", "Unknown") says something is wrong: a positive-polarity
// condition (Accepted, Programmed, ResolvedRefs, …) that is not True, or a
// negative-polarity one (see NegativePolarity) that is True.
func ConditionIsProblem(conditionType, status string) bool {
	if negativePolarity[conditionType] {
		return status == "True"
	}
	return status != "True"
}

// ConditionSeverity grades a condition that is reported as a finding: an
// error fails gwdev check; a warning (an Unknown status, an accepted object
// with something to say, OverlappingTLSConfig, InsecureFrontendValidationMode)
// does not.
func ConditionSeverity(conditionType string, status metav1.ConditionStatus) Severity {
	switch {
	case status == metav1.ConditionUnknown,
		conditionType == string(gwv1.ListenerConditionOverlappingTLSConfig),
		conditionType == string(gwv1.GatewayConditionInsecureFrontendValidationMode),
		conditionType == string(gwv1.GatewayConditionAccepted) && status == metav1.ConditionTrue:
		return SeverityWarning
	}
	return SeverityError
}
