package engine

// negativePolarity lists the condition types that report a problem when
// True (the others report one when False or Unknown).
var negativePolarity = map[string]bool{
	"Conflicted":                     true,
	"OverlappingTLSConfig":           true,
	"PartiallyInvalid":               true,
	"InsecureFrontendValidationMode": true,
}

// ConditionIsProblem reports whether a condition of this type and status
// ("True", "False", "Unknown") says something is wrong: a positive-polarity
// condition (Accepted, Programmed, ResolvedRefs, …) that is not True, or a
// negative-polarity one (Conflicted, OverlappingTLSConfig,
// PartiallyInvalid, InsecureFrontendValidationMode) that is True.
func ConditionIsProblem(conditionType, status string) bool {
	if negativePolarity[conditionType] {
		return status == "True"
	}
	return status != "True"
}
