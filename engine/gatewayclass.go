package engine

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// classState is one GatewayClass name the Gateways use or a manifest defines.
type classState struct {
	name    string
	obj     *gwv1.GatewayClass // nil: no manifest
	managed bool
	// accepted is false when the class manifest is invalid; its Gateways then
	// stay Pending.
	accepted bool
	cond     *conditionSet
}

// processGatewayClasses decides which classes gwdev manages and computes
// GatewayClass status.
func (t *translator) processGatewayClasses() {
	for _, gc := range t.out.GatewayClasses {
		cs := &classState{name: gc.Name, obj: gc, accepted: true,
			cond: newConditionSet(gc.Generation, &t.opts.Now)}
		cs.managed = t.classAllowed(gc.Name) &&
			(!t.opts.OnlyOwnClasses || string(gc.Spec.ControllerName) == t.opts.controllerName())
		t.classes[gc.Name] = cs
		if !cs.managed {
			continue
		}
		t.checkClassParameters(cs)
		cs.cond.setDefault(string(gwv1.GatewayClassConditionStatusAccepted), metav1.ConditionTrue,
			string(gwv1.GatewayClassReasonAccepted), "gwdev emulates controller "+string(gc.Spec.ControllerName))
		cs.cond.setDefault(string(gwv1.GatewayClassConditionStatusSupportedVersion), metav1.ConditionTrue,
			string(gwv1.GatewayClassReasonSupportedVersion), "Gateway API "+APIVersion+" is supported")
		cs.accepted = !cs.cond.isFalse(string(gwv1.GatewayClassConditionStatusAccepted))
	}
	for _, gw := range t.out.Gateways {
		name := string(gw.Spec.GatewayClassName)
		if _, ok := t.classes[name]; ok {
			continue
		}
		cs := &classState{name: name, managed: t.classAllowed(name), accepted: true}
		t.classes[name] = cs
		if cs.managed {
			t.noteKind(NoteNoGatewayClass, SeverityInfo, ObjectKey{Kind: "GatewayClass", Name: name}, "",
				"no GatewayClass manifest: gwdev acts as the controller of class "+name)
		}
	}
}

// classAllowed applies Options.Classes.
func (t *translator) classAllowed(name string) bool {
	if len(t.opts.Classes) == 0 {
		return true
	}
	for _, c := range t.opts.Classes {
		if c == name {
			return true
		}
	}
	return false
}

// checkClassParameters resolves parametersRef: ConfigMaps and Secrets must
// exist; other kinds are implementation specific and only noted.
func (t *translator) checkClassParameters(cs *classState) {
	ref := cs.obj.Spec.ParametersRef
	if ref == nil {
		return
	}
	key := ObjectKey{Kind: "GatewayClass", Name: cs.name}
	if ref.Group != "" || (ref.Kind != "ConfigMap" && ref.Kind != "Secret") {
		t.noteKind(NoteParametersIgnored, SeverityWarning, key, "parametersRef",
			"parametersRef "+string(ref.Group)+"/"+string(ref.Kind)+" "+ref.Name+" is implementation specific and not interpreted by gwdev")
		return
	}
	ns := ""
	if ref.Namespace != nil {
		ns = string(*ref.Namespace)
	}
	found := false
	if ref.Kind == "ConfigMap" {
		_, found = t.configMaps[nsName{ns, ref.Name}]
	} else {
		_, found = t.secrets[nsName{ns, ref.Name}]
	}
	if ns == "" {
		cs.cond.fail(string(gwv1.GatewayClassConditionStatusAccepted), string(gwv1.GatewayClassReasonInvalidParameters),
			"parametersRef to a "+string(ref.Kind)+" must set namespace")
		return
	}
	if !found {
		cs.cond.fail(string(gwv1.GatewayClassConditionStatusAccepted), string(gwv1.GatewayClassReasonInvalidParameters),
			"parametersRef "+string(ref.Kind)+" "+ns+"/"+ref.Name+" not found")
	}
}
