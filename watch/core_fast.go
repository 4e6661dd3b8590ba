package watch

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Services are the most numerous objects of a typical folder (every route
// points at one or two), and decoding them with strictDecode (a JSON round
// trip) cost more than everything else done to them. decodeSimpleService
// decodes the fields most Services use directly and declines anything
// else, which strictDecode then handles and words. TestDecodeSimpleService
// checks it against strictDecode.

// decodeSimpleService decodes u into svc as strictDecode would, or returns
// false (leaving svc untouched) when u has a field, type or value it does
// not handle.
func decodeSimpleService(u map[string]any, svc *corev1.Service) bool {
	var out corev1.Service
	for k, v := range u {
		switch k {
		case "apiVersion":
			if !setString(v, &out.APIVersion) {
				return false
			}
		case "kind":
			if !setString(v, &out.Kind) {
				return false
			}
		case "metadata":
			m, ok := v.(map[string]any)
			if !ok || !decodeSimpleMeta(m, &out.ObjectMeta) {
				return false
			}
		case "spec":
			m, ok := v.(map[string]any)
			if !ok || !decodeSimpleServiceSpec(m, &out.Spec) {
				return false
			}
		default:
			return false
		}
	}
	*svc = out
	return true
}

func decodeSimpleServiceSpec(m map[string]any, spec *corev1.ServiceSpec) bool {
	for k, v := range m {
		switch k {
		case "type":
			if !setString(v, (*string)(&spec.Type)) {
				return false
			}
		case "clusterIP":
			if !setString(v, &spec.ClusterIP) {
				return false
			}
		case "externalName":
			if !setString(v, &spec.ExternalName) {
				return false
			}
		case "selector":
			sel, ok := v.(map[string]any)
			if !ok {
				return false
			}
			spec.Selector = make(map[string]string, len(sel))
			for key, val := range sel {
				s, ok := val.(string)
				if !ok {
					return false
				}
				spec.Selector[key] = s
			}
		case "ports":
			list, ok := v.([]any)
			if !ok {
				return false
			}
			spec.Ports = make([]corev1.ServicePort, len(list))
			for i, item := range list {
				p, ok := item.(map[string]any)
				if !ok || !decodeSimpleServicePort(p, &spec.Ports[i]) {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

func decodeSimpleServicePort(m map[string]any, port *corev1.ServicePort) bool {
	for k, v := range m {
		switch k {
		case "name":
			if !setString(v, &port.Name) {
				return false
			}
		case "protocol":
			if !setString(v, (*string)(&port.Protocol)) {
				return false
			}
		case "appProtocol":
			port.AppProtocol = new(string)
			if !setString(v, port.AppProtocol) {
				return false
			}
		case "port", "nodePort":
			n, ok := int32Value(v)
			if !ok {
				return false
			}
			if k == "port" {
				port.Port = n
			} else {
				port.NodePort = n
			}
		case "targetPort":
			switch v := v.(type) {
			case string:
				port.TargetPort = intstr.FromString(v)
			default:
				n, ok := int32Value(v)
				if !ok {
					return false
				}
				port.TargetPort = intstr.FromInt32(n)
			}
		default:
			return false
		}
	}
	return true
}

// int32Value accepts the integers encoding/json would put in an int32.
func int32Value(v any) (int32, bool) {
	n, ok := v.(int64)
	if !ok || n < math.MinInt32 || n > math.MaxInt32 {
		return 0, false
	}
	return int32(n), true
}

// setString stores v in dst when it is a string.
func setString(v any, dst *string) bool {
	s, ok := v.(string)
	if ok {
		*dst = s
	}
	return ok
}
