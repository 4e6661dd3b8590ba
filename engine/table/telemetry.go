package table

import "fmt"

// Tracing is a Gateway's distributed tracing from an XTelemetryPolicy whose
// tracing mode is Enabled, with the API's and gwdev's defaults applied: one
// server span per HTTP request (gRPC included) through the Gateway's HTTP and
// HTTPS listeners, exported over OTLP, with the W3C traceparent of the span
// sent to the backend.
type Tracing struct {
	// Policy is "<ns>/<name>" of the XTelemetryPolicy.
	Policy string `json:"policy"`
	// Exporter is where spans are exported.
	Exporter TracingExporter `json:"exporter"`
	// Sampling is the share of new traces sampled (a request without a
	// traceparent, or any request when ParentBased is false).
	Sampling Fraction `json:"sampling"`
	// ParentBased is true when a request's traceparent decides: a span
	// whose parent is not sampled is not sampled, and one whose parent is
	// sampled is sampled at ParentSampling.
	ParentBased bool `json:"parentBased"`
	// ParentSampling is the share of sampled parents whose span is sampled
	// too (meaningful when ParentBased).
	ParentSampling Fraction `json:"parentSampling"`
	// ServiceName is the resource's service.name.
	ServiceName string `json:"serviceName"`
	// SpanName is every span's name ("" : the request's HTTP method, as
	// the OpenTelemetry HTTP conventions name a server span without a
	// route template).
	SpanName string `json:"spanName,omitempty"`
	// Attributes are set on every span, after the standard ones.
	Attributes []TracingAttribute `json:"attributes,omitempty"`
}

// Fraction is Numerator/Denominator (0 <= Numerator <= Denominator,
// Denominator > 0).
type Fraction struct {
	Numerator   int32 `json:"numerator"`
	Denominator int32 `json:"denominator"`
}

// OTLP transports (TracingExporter.Protocol).
const (
	// OTLPGRPC is OTLP over gRPC (the collector's TraceService).
	OTLPGRPC = "otlp/grpc"
	// OTLPHTTP is OTLP over HTTP with protobuf bodies (POST /v1/traces).
	OTLPHTTP = "otlp/http"
)

// TracingExporter is the OTLP receiver of a Tracing: the policy's
// provider.backendRef resolved like any backend.
type TracingExporter struct {
	// Service is the referenced Service ("Service/<ns>/<name>").
	Service ObjectKey `json:"service"`
	Port    int32     `json:"port"`
	// Protocol is OTLPGRPC or OTLPHTTP.
	Protocol string `json:"protocol"`
	// Target is where the receiver is (nil with NotExported set).
	Target *Target `json:"target,omitempty"`
	// Headers are added to every export request; their values are never
	// serialised.
	Headers []TracingHeader `json:"headers,omitempty"`
	// NotExported, when set, is why spans are made and propagated but
	// never exported ("" : they are exported to Target's first address).
	NotExported string `json:"notExported,omitempty"`
}

// TracingHeader is one header of the export requests.
type TracingHeader struct {
	Name  string `json:"name"`
	Value string `json:"-"`
}

// TracingAttribute is one span attribute: exactly one of Header, Literal
// and Attribute says where its value comes from.
type TracingAttribute struct {
	// Name is the attribute key on the span.
	Name string `json:"name"`
	// Header is a request header (the response's when the request has
	// none) whose value, redacted as in traces, is the attribute's; a span
	// gets no attribute when neither has it.
	Header string `json:"header,omitempty"`
	// Literal is a fixed value.
	Literal string `json:"literal,omitempty"`
	// Attribute is one of TracingAttributeKeys: the value the data plane
	// computes for that OpenTelemetry semantic-convention key.
	Attribute string `json:"attribute,omitempty"`
}

// TracingAttributeKeys are the OpenTelemetry semantic-convention keys the
// data plane can fill for a TracingAttribute's Attribute (and sets on every
// span itself). Sorted.
var TracingAttributeKeys = []string{
	"client.address",
	"http.request.method",
	"http.response.status_code",
	"network.protocol.version",
	"server.address",
	"server.port",
	"url.path",
	"url.query",
	"url.scheme",
	"user_agent.original",
}

// validate checks a Tracing's invariants: fractions in range, a known
// protocol, exactly one source per attribute (nil: no tracing).
func (tr *Tracing) validate() error {
	if tr == nil {
		return nil
	}
	for _, f := range []Fraction{tr.Sampling, tr.ParentSampling} {
		if f.Denominator <= 0 || f.Numerator < 0 || f.Numerator > f.Denominator {
			return fmt.Errorf("tracing of %s: sampling fraction %d/%d out of range", tr.Policy, f.Numerator, f.Denominator)
		}
	}
	if p := tr.Exporter.Protocol; p != OTLPGRPC && p != OTLPHTTP {
		return fmt.Errorf("tracing of %s: exporter protocol %q", tr.Policy, p)
	}
	if tr.Exporter.NotExported == "" && (tr.Exporter.Target == nil || len(tr.Exporter.Target.Addresses) == 0) {
		return fmt.Errorf("tracing of %s: exporter without an address or a reason", tr.Policy)
	}
	for _, a := range tr.Attributes {
		n := 0
		for _, v := range []string{a.Header, a.Literal, a.Attribute} {
			if v != "" {
				n++
			}
		}
		if a.Name == "" || n != 1 {
			return fmt.Errorf("tracing of %s: attribute %q needs a name and exactly one source", tr.Policy, a.Name)
		}
	}
	return nil
}
