package report

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	gwapiv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/yaml"
)

// Types for the corners of encoding/json that build follows or hands back.
type (
	zooInner struct {
		A string `json:"a"`
		B int    `json:"b,omitempty"`
	}
	zooUnexported struct {
		C string `json:"c"`
	}
	zooValueMarshaler struct{ X int }
	zooPtrMarshaler   struct{ X int }
	zooText           struct{ X string }
	zooPtrZero        struct{ N int }
	zooValueZero      struct{ N int }
	zooKey            string
	zooTextKey        struct{ k string }
	zooByte           byte
	zooAll            struct {
		zooInner
		zooUnexported
		Plain      string
		Tagged     string                     `json:"tagged"`
		Dash       string                     `json:"-"`
		DashComma  string                     `json:"-,"`
		Empty      string                     `json:"empty,omitempty"`
		Zero       int                        `json:"zero,omitempty"`
		F          bool                       `json:"f,omitempty"`
		Ptr        *int                       `json:"ptr,omitempty"`
		NilPtr     *int                       `json:"nilPtr"`
		Iface      any                        `json:"iface,omitempty"`
		NilSlice   []string                   `json:"nilSlice"`
		EmptySlice []string                   `json:"emptySlice"`
		NilMap     map[string]int             `json:"nilMap"`
		EmptyMap   map[string]int             `json:"emptyMap"`
		OmitMap    map[string]int             `json:"omitMap,omitempty"`
		Bytes      []byte                     `json:"bytes"`
		MyBytes    []zooByte                  `json:"myBytes"`
		Arr        [2]byte                    `json:"arr"`
		IntArr     [3]int                     `json:"intArr"`
		Float      float64                    `json:"float"`
		Float32    float32                    `json:"float32"`
		Uint       uint64                     `json:"uint"`
		Neg        int8                       `json:"neg"`
		IntKeys    map[int]string             `json:"intKeys"`
		NamedKeys  map[zooKey]int             `json:"namedKeys"`
		TextKeys   map[zooTextKey]int         `json:"textKeys"`
		VM         zooValueMarshaler          `json:"vm"`
		PM         zooPtrMarshaler            `json:"pm"`
		PMs        []zooPtrMarshaler          `json:"pms"`
		PMMap      map[string]zooPtrMarshaler `json:"pmMap"`
		PMPtr      *zooPtrMarshaler           `json:"pmPtr"`
		Text       zooText                    `json:"text"`
		ZPtr       zooPtrZero                 `json:"zPtr,omitzero"`
		ZVal       zooValueZero               `json:"zVal,omitzero"`
		ZPlain     zooInner                   `json:"zPlain,omitzero"`
		ZBoth      string                     `json:"zBoth,omitempty,omitzero"`
		ZPtrPtr    *zooPtrZero                `json:"zPtrPtr,omitzero"`
		Time       metav1.Time                `json:"time"`
		ZeroTime   metav1.Time                `json:"zeroTime"`
		TimePtr    *metav1.Time               `json:"timePtr,omitempty"`
		OmitTime   metav1.Time                `json:"omitTime,omitempty,omitzero"`
		IOS        []intstr.IntOrString       `json:"ios"`
		Q          resource.Quantity          `json:"q"`
		Dur        metav1.Duration            `json:"dur"`
		Raw        json.RawMessage            `json:"raw"`
		Nested     []map[string]any           `json:"nested"`
	}
	zooBad struct {
		Bad string `json:"bad"`
	}
	zooOdd struct {
		Odd string `json:"odd name!"`
	}
	zooStr struct {
		Str int `json:"str,string"`
	}
	zooConflict struct {
		zooInner
		A string `json:"a"`
	}
	zooEmbedPtr struct {
		*zooInner
		Z string `json:"z"`
	}
	zooEmbedTagged struct {
		zooInner `json:"inner"`
		Z        string `json:"z"`
	}
	zooEmbedUnexportedTagged struct {
		zooUnexported `json:"hidden"`
	}
)

func (zooValueMarshaler) MarshalJSON() ([]byte, error) { return []byte(`{"value":"marshaler"}`), nil }
func (*zooPtrMarshaler) MarshalJSON() ([]byte, error)  { return []byte(`"pointer marshaler"`), nil }
func (z zooText) MarshalText() ([]byte, error)         { return []byte("text:" + z.X), nil }
func (k zooTextKey) MarshalText() ([]byte, error)      { return []byte("key-" + k.k), nil }
func (z *zooPtrZero) IsZero() bool                     { return z == nil || z.N == 7 }
func (z zooValueZero) IsZero() bool                    { return z.N == 9 }

// TestYAMLBuildMatchesJSON checks Encode, which builds the tree from Go
// values, against sigs.k8s.io/yaml.Marshal (encoding/json's text made
// YAML) on values that use each corner of encoding/json: embedded
// structs, tags, omitempty and omitzero with and without IsZero methods,
// marshalers on values and on pointers (addressable and not), text keys,
// bytes, floats, invalid UTF-8, times, IntOrString, quantities; and that
// Kubernetes objects are built without encoding/json's text.
func TestYAMLBuildMatchesJSON(t *testing.T) {
	one := 1
	full := func() zooAll {
		return zooAll{
			zooInner: zooInner{A: "inner"}, zooUnexported: zooUnexported{C: "promoted"},
			Plain: "p", Tagged: "yes", Dash: "hidden", DashComma: "dash",
			Ptr: &one, Iface: map[string]any{"k": []any{1, "two", 3.5, nil, true}},
			EmptySlice: []string{}, EmptyMap: map[string]int{}, Bytes: []byte("hi"), MyBytes: []zooByte{1, 2},
			Arr: [2]byte{1, 2}, IntArr: [3]int{1, -2, 3}, Float: 1e21, Float32: 0.1, Uint: 1 << 63, Neg: -8,
			IntKeys: map[int]string{2: "b", 10: "a"}, NamedKeys: map[zooKey]int{"z": 1, "a10": 2, "a9": 3},
			TextKeys: map[zooTextKey]int{{"x"}: 1}, PMs: []zooPtrMarshaler{{1}}, PMMap: map[string]zooPtrMarshaler{"m": {2}},
			PMPtr: &zooPtrMarshaler{3}, Text: zooText{"t"}, ZPtr: zooPtrZero{7}, ZVal: zooValueZero{9}, ZBoth: "",
			ZPtrPtr: &zooPtrZero{7},
			Time:    metav1.NewTime(time.Date(2026, 12, 3, 7, 0, 0, 0, time.FixedZone("x", 3600))),
			TimePtr: &metav1.Time{}, IOS: []intstr.IntOrString{intstr.FromInt32(8080), intstr.FromString("http"), intstr.FromInt32(-1)},
			Q: resource.MustParse("100Mi"), Dur: metav1.Duration{Duration: 90 * time.Second}, Raw: json.RawMessage(`{"b":1,"a":[2]}`),
			Nested: []map[string]any{{"n": 1}, nil, {}},
		}
	}
	notZero := full()
	notZero.ZPtr, notZero.ZVal, notZero.ZPlain, notZero.ZPtrPtr = zooPtrZero{1}, zooValueZero{1}, zooInner{A: "x"}, &zooPtrZero{1}
	notZero.OmitTime = metav1.NewTime(time.Unix(1, 0))
	route := &gwapiv1.HTTPRoute{
		TypeMeta:   metav1.TypeMeta{APIVersion: "gateway.networking.k8s.io/v1", Kind: "HTTPRoute"},
		ObjectMeta: metav1.ObjectMeta{Name: "r", Namespace: "n", Labels: map[string]string{"app": "x", "a10": "y", "a9": "z"}},
		Spec: gwapiv1.HTTPRouteSpec{Hostnames: []gwapiv1.Hostname{"a.example.com"},
			Rules: []gwapiv1.HTTPRouteRule{{BackendRefs: []gwapiv1.HTTPBackendRef{{}}}}},
		Status: gwapiv1.HTTPRouteStatus{RouteStatus: gwapiv1.RouteStatus{Parents: []gwapiv1.RouteParentStatus{{
			Conditions: []metav1.Condition{{Type: "Accepted", Status: "True", LastTransitionTime: metav1.NewTime(time.Unix(1e9, 0)), Message: strings.Repeat("long words ", 12)}},
		}}}},
	}
	svc := corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: "s", CreationTimestamp: metav1.NewTime(time.Unix(5, 0))},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromString("web")}}}}
	gw := &gwapiv1.Gateway{ObjectMeta: metav1.ObjectMeta{Name: "g"}, Spec: gwapiv1.GatewaySpec{GatewayClassName: "c",
		Listeners: []gwapiv1.Listener{{Name: "l", Port: 80, Protocol: gwapiv1.HTTPProtocolType}}}}
	values := []any{
		full(), ptr(full()), notZero, &notZero, []any{full(), &notZero}, map[string]any{"v": full(), "p": &notZero},
		zooBad{"a\xffb"}, []intstr.IntOrString{{Type: intstr.String, StrVal: "\xfe"}}, []intstr.IntOrString{{Type: 7}},
		[]float64{1e21, 1e-7, 0.5, 100}, zooOdd{"odd"}, zooStr{42}, zooConflict{zooInner{A: "inner"}, "outer"}, zooEmbedPtr{Z: "z"}, zooEmbedPtr{zooInner: &zooInner{A: "a"}},
		zooEmbedTagged{zooInner{A: "a"}, "z"}, zooEmbedUnexportedTagged{zooUnexported{"c"}},
		route, *route, svc, &svc, gw, nil, "string", 3, []string(nil), map[string]any{},
		zooPtrMarshaler{1}, &zooPtrMarshaler{1}, metav1.Time{}, &metav1.Time{}, intstr.FromInt32(3),
	}
	built := 0
	for i, v := range values {
		want, werr := yaml.Marshal(v)
		var e YAMLEncoder
		got, err := e.Encode(v)
		if (err != nil) != (werr != nil) || string(got) != string(want) {
			t.Errorf("value %d (%T): got %v\n%s\nwant %v\n%s", i, v, err, got, werr, want)
		}
		// The tree build makes, emitted, when the emitter can write it
		// (Encode falls back to encoding/json's text when it cannot).
		var tree jsonTree
		var em yamlEmitter
		root, err := tree.build(v)
		if err == nil {
			err = em.document(&tree, root)
		}
		if err == nil {
			built++
			if string(em.out) != string(want) {
				t.Errorf("value %d (%T) built:\n%s\nwant\n%s", i, v, em.out, want)
			}
		}
	}
	if built < len(values)-5 {
		t.Errorf("only %d of %d values built", built, len(values))
	}
	// The Kubernetes objects take the fast way whole: no part through
	// encoding/json's text, no fallback to it.
	for _, v := range []any{route, &svc, gw} {
		var tree jsonTree
		root, err := tree.build(v)
		if err != nil {
			t.Fatalf("%T: build: %v", v, err)
		}
		var em yamlEmitter
		if err := em.document(&tree, root); err != nil {
			t.Errorf("%T: emit: %v", v, err)
		}
		for _, typ := range []any{metav1.ObjectMeta{}, gwapiv1.HTTPRoute{}, gwapiv1.Gateway{}, corev1.Service{}, zooAll{}} {
			if p := typeInfoOf(reflect.TypeOf(typ)).plan; p.viaJSON || !p.sorted {
				t.Errorf("%T: plan viaJSON=%v sorted=%v", typ, p.viaJSON, p.sorted)
			}
		}
	}
}

func ptr[T any](v T) *T { return &v }

// TestYAMLBuildHandsBackErrors: a value encoding/json refuses gives
// encoding/json's own error, as before.
func TestYAMLBuildHandsBackErrors(t *testing.T) {
	for _, v := range []any{map[string]any{"f": func() {}}, struct{ C chan int }{make(chan int)}, []any{1, complex(1, 2)}} {
		_, want := json.Marshal(v)
		var e YAMLEncoder
		_, err := e.Encode(v)
		if err == nil || want == nil || err.Error() != want.Error() {
			t.Errorf("%T: error %v, encoding/json's %v", v, err, want)
		}
	}
}
