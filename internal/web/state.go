package web

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/internal/app"
	"github.com/gwdev/gwdev/internal/report"
)

// pageState is what /ui/state serves: one State as the page shows it.
// Every part is what another front end already computes (the engine's
// graph, check's findings and objects, the data plane's ports, migrate
// --compare's comparison); nothing is derived here.
type pageState struct {
	Reload int       `json:"reload"`
	Time   time.Time `json:"time"`
	Dir    string    `json:"dir"`
	// Root says what happened to the watched folder; RootProblem is set
	// when it is missing. Empty words a folder with no manifests.
	Root        string `json:"root,omitempty"`
	RootProblem bool   `json:"rootProblem,omitempty"`
	Empty       string `json:"empty,omitempty"`
	// LoadProblems counts the manifests that did not load; Stale the
	// objects still served from an earlier version of their file.
	LoadProblems int      `json:"loadProblems"`
	Stale        []string `json:"stale,omitempty"`
	// Ports are what the data plane bound.
	Ports []emulator.PortReport `json:"ports"`
	// Graph is the topology (engine.Result.Graph), DOT the same graph as
	// `gwdev graph --format dot` prints it, which the page lays out with
	// Graphviz in the browser (assets/viz-global.js). Sources are every
	// object's file:line, by engine.ObjectKey's String
	// (Kind/namespace/name).
	Graph   *engine.Graph     `json:"graph"`
	DOT     string            `json:"dot"`
	Sources map[string]string `json:"sources"`
	// Objects are check -o json's: every object with its status, and the
	// findings.
	Objects json.RawMessage `json:"objects"`
	// Policies say what each policy does on each target.
	Policies []engine.PolicyEffect `json:"policies"`
	// Migration is the last comparison of the folder's Ingresses (nil:
	// none ran).
	Migration *pageMigration `json:"migration,omitempty"`
}

// pageMigration is a Migration comparison as migrate --compare -o json
// writes it, with the runner's progress.
type pageMigration struct {
	Reload            int              `json:"reload"`
	Running           bool             `json:"running,omitempty"`
	Error             string           `json:"error,omitempty"`
	Requests          int              `json:"requests"`
	LeftOut           int              `json:"leftOut"`
	Differences       []pageDifference `json:"differences"`
	Dropped           any              `json:"dropped"`
	ConvertedProblems any              `json:"convertedProblems"`
}

// pageDifference is one request the two sides answered differently, as
// the dashboard's Migration view lists it: the request, the Ingress path
// it was made from, each field that differs on both sides, and the rule
// each side matched.
type pageDifference struct {
	Request       string      `json:"request"`
	From          string      `json:"from"`
	Fields        []pageField `json:"fields"`
	IngressRule   string      `json:"ingressRule"`
	IngressSource string      `json:"ingressSource"`
	GatewayRule   string      `json:"gatewayRule"`
	GatewaySource string      `json:"gatewaySource"`
}

// pageField is a field that differs: its value on each side.
type pageField struct {
	Name    string `json:"name"`
	Ingress string `json:"ingress"`
	Gateway string `json:"gateway"`
}

// newPageState renders st (and the last Migration comparison) for the
// page.
func newPageState(st *app.State, mig *app.MigrationState, dir string) (*pageState, error) {
	res, lr := st.Result, st.Update.Result
	ps := &pageState{Reload: st.Reload, Time: st.Time, Dir: dir, Root: st.Root, RootProblem: st.RootProblem, Empty: st.Empty,
		LoadProblems: len(lr.Problems), Graph: res.Graph(), Sources: map[string]string{}, Policies: res.Policies}
	if ps.Policies == nil {
		ps.Policies = []engine.PolicyEffect{}
	}
	if st.Ports != nil {
		ps.Ports = st.Ports.Ports
	}
	for _, s := range st.Update.Stale {
		ps.Stale = append(ps.Stale, s.Object.String())
	}
	if lr.Snapshot != nil {
		lr.Snapshot.EachSource(func(k engine.ObjectKey, src engine.Source) {
			if src.File != "" {
				ps.Sources[k.String()] = src.String()
			}
		})
	}
	var dot strings.Builder
	if err := app.WriteGraph(&dot, ps.Graph, "dot"); err != nil {
		return nil, err
	}
	ps.DOT = dot.String()
	var objs bytes.Buffer
	if err := report.WriteObjectsJSON(&objs, res, report.Findings(lr, res)); err != nil {
		return nil, err
	}
	ps.Objects = objs.Bytes()
	if mig != nil {
		pm := &pageMigration{Reload: mig.Reload, Running: mig.Running}
		if mig.Err != nil {
			pm.Error = mig.Err.Error()
		}
		if c := mig.Comparison; c != nil {
			pm.Requests, pm.LeftOut, pm.Dropped, pm.ConvertedProblems = c.Requests, c.LeftOut, c.Dropped, c.Converted.Problems
			for _, d := range c.Differences {
				pd := pageDifference{Request: d.RequestLine(), From: d.Request.From.String(), IngressRule: d.Ingress.Rule,
					IngressSource: d.Ingress.Source, GatewayRule: d.Gateway.Rule, GatewaySource: d.Gateway.Source}
				for _, f := range d.Fields {
					pd.Fields = append(pd.Fields, pageField{Name: f, Ingress: d.Ingress.Field(f), Gateway: d.Gateway.Field(f)})
				}
				pm.Differences = append(pm.Differences, pd)
			}
		}
		ps.Migration = pm
	}
	return ps, nil
}
