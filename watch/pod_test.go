package watch

import (
	"strings"
	"testing"
)

// TestPodLoaded: a core/v1 Pod is loaded namespaced with its labels and
// status (an XBackend's EndpointSelector reads them); what the apiserver
// refuses of the fields gwdev reads is refused with its wording, naming the
// field: no containers, a container without name or image, an unknown
// phase or condition status, a bad label.
func TestPodLoaded(t *testing.T) {
	l := newTestLoader(t)
	res := l.LoadBytes("ok.yaml", []byte("apiVersion: v1\nkind: Pod\nmetadata: {name: web-1, labels: {app: web}}\nspec: {containers: [{name: echo, image: echo}]}\nstatus: {phase: Running, conditions: [{type: Ready, status: \"False\"}]}\n"))
	if len(res.Problems) > 0 {
		t.Fatalf("problems: %v", res.Problems)
	}
	if got := res.Snapshot.Pods; len(got) != 1 || got[0].Namespace != "default" || got[0].Labels["app"] != "web" || got[0].Kind != "Pod" ||
		got[0].Status.Phase != "Running" || len(got[0].Status.Conditions) != 1 {
		t.Fatalf("loaded %+v", got)
	}
	for _, c := range []struct{ name, doc, want string }{
		{"none", "spec: {containers: []}", "spec.containers: Required value"},
		{"noname", "spec: {containers: [{image: echo}]}", "spec.containers[0].name: Required value"},
		{"noimage", "spec: {containers: [{name: echo}]}", "spec.containers[0].image: Required value"},
		{"dup", "spec: {containers: [{name: a, image: x}, {name: a, image: z}]}", "spec.containers[1].name: Duplicate value"},
		{"phase", "spec: {containers: [{name: a, image: x}]}\nstatus: {phase: Sleeping}", `status.phase: Unsupported value: "Sleeping"`},
		{"cond", "spec: {containers: [{name: a, image: x}]}\nstatus: {conditions: [{type: Ready, status: maybe}]}", `status.conditions[0].status: Unsupported value: "maybe"`},
		{"label", "metadata: {name: label, labels: {app: \"a b\"}}\nspec: {containers: [{name: a, image: x}]}", "metadata.labels: Invalid value"},
		{"field", "spec: {containers: [{name: a, image: x}], nodeName: 5}", "spec.nodeName"},
	} {
		doc := "apiVersion: v1\nkind: Pod\n"
		if !strings.HasPrefix(c.doc, "metadata:") {
			doc += "metadata: {name: " + c.name + "}\n"
		}
		res := l.LoadBytes(c.name+".yaml", []byte(doc+c.doc+"\n"))
		if len(res.Problems) != 1 || !strings.Contains(res.Problems[0].String(), c.want) || len(res.Snapshot.Pods) != 0 {
			t.Errorf("%s: problems %v, want one containing %q", c.name, res.Problems, c.want)
		}
	}
}
