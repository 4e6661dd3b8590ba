package watch

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Pods are loaded for one use: an XBackend of type EndpointSelector selects
// them by label (the labels are checked with the rest of metadata). What the
// apiserver checks of the fields gwdev reads is checked here, in its
// wording: at least one container, each with a DNS label name (unique) and
// an image, as on create; the status phase and Ready condition, which
// decide whether the Pod is an endpoint, as on a status update.

var (
	podPhases         = []string{string(corev1.PodPending), string(corev1.PodRunning), string(corev1.PodSucceeded), string(corev1.PodFailed), string(corev1.PodUnknown)}
	conditionStatuses = []string{string(corev1.ConditionTrue), string(corev1.ConditionFalse), string(corev1.ConditionUnknown)}
)

// validatePod checks spec.containers and status.phase/conditions.
func validatePod(p *corev1.Pod) field.ErrorList {
	var errs field.ErrorList
	cp := field.NewPath("spec", "containers")
	if len(p.Spec.Containers) == 0 {
		errs = append(errs, field.Required(cp, ""))
	}
	names := sets.New[string]()
	for i, c := range p.Spec.Containers {
		path := cp.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(path.Child("name"), ""))
		case names.Has(c.Name):
			errs = append(errs, field.Duplicate(path.Child("name"), c.Name))
		default:
			for _, msg := range validation.IsDNS1123Label(c.Name) {
				errs = append(errs, field.Invalid(path.Child("name"), c.Name, msg))
			}
		}
		names.Insert(c.Name)
		if c.Image == "" {
			errs = append(errs, field.Required(path.Child("image"), ""))
		}
	}
	sp := field.NewPath("status")
	if ph := p.Status.Phase; ph != "" && !sets.New(podPhases...).Has(string(ph)) {
		errs = append(errs, field.NotSupported(sp.Child("phase"), ph, podPhases))
	}
	for i, c := range p.Status.Conditions {
		path := sp.Child("conditions").Index(i)
		if c.Type == "" {
			errs = append(errs, field.Required(path.Child("type"), ""))
		}
		if !sets.New(conditionStatuses...).Has(string(c.Status)) {
			errs = append(errs, field.NotSupported(path.Child("status"), c.Status, conditionStatuses))
		}
	}
	return errs
}
