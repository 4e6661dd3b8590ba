package conformance

import (
	"context"
	"flag"
	"fmt"
	"io/fs"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gwv1 "sigs.k8s.io/gateway-api/apis/v1"
	gwxv1a1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
	"sigs.k8s.io/gateway-api/conformance"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/config"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"

	"github.com/gwdev/gwdev/emulator"
	"github.com/gwdev/gwdev/engine"
	"github.com/gwdev/gwdev/watch"
)

var (
	runSuite     = flag.Bool("gwdev.conformance", false, "run the Gateway API conformance suite (binds 127.0.0.x ports 80, 443, 8080…: needs root or ip_unprivileged_port_start=0)")
	reportPath   = flag.String("gwdev.report", "report.yaml", "where TestConformance writes the report and TestNoRegression reads it (\"\": no report)")
	baselinePath = flag.String("gwdev.baseline", "", "the committed report TestNoRegression compares with")
	recheck      = flag.Bool("gwdev.recheck", false, "TestNoRegression re-runs each regressed test once alone; only a test that fails again is a regression")
	onlyTests    = flag.String("gwdev.only", "", "comma-separated test names to run (the others are not run; no report is written)")
)

// className is the GatewayClass the suite's Gateways use, and meshName
// the XMesh of gwdev's mesh.
const (
	className = "gwdev"
	meshName  = "gwdev"
)

// TestConformance runs every conformance test of v1.6.3 against gwdev,
// the way the suite's own Run does: a test runs when gwdev supports all of
// its features (the core features of the GATEWAY-HTTP, -TLS, -GRPC, -TCP
// and -UDP profiles and the claimed extended ones), whether or not it
// belongs to one of those profiles; every other test is recorded with why
// it did not run. It writes the reports. A failing conformance test fails
// this test; `make conformance` then decides with TestNoRegression.
func TestConformance(t *testing.T) {
	if !*runSuite {
		t.Skip("run with -gwdev.conformance (make conformance)")
	}
	var api *apiServer
	var fin *namespaceFinalizer
	if *realAPI {
		api, fin = newRealAPIServer(t) // realapi_test.go
	} else {
		var err error
		if api, err = newAPIServer(); err != nil {
			t.Fatal(err)
		}
	}
	kube := startGwdev(t, api, fin)
	// The mesh tests exec a client in an echo Pod: the exec endpoint runs
	// it in process (exec_test.go, meshclient_test.go).
	exec := newExecServer((&meshClient{api: api, srv: gwdevServer}).exec)
	t.Cleanup(exec.Close)
	clientset, err := withExec(newClientset(api, gwdevServer, kube), exec)
	if err != nil {
		t.Fatal(err)
	}

	opts := suite.ConformanceOptions{
		ConfigurableOptions: suite.ConfigurableOptions{
			GatewayClassName:     className,
			CleanupTestResources: true,
			SupportedFeatures:    claimedFeatures,
			ConformanceProfiles:  profileNames(),
			Implementation:       implementation(),
			Mode:                 "default",
			TimeoutConfig:        timeouts(),
			UsableNetworkAddresses: []gwv1.GatewaySpecAddress{
				{Type: new(gwv1.IPAddressType), Value: "127.0.200.1"},
			},
			// TEST-NET-1: not loopback, so gwdev refuses it (and never binds it).
			UnusableNetworkAddresses: []gwv1.GatewaySpecAddress{
				{Type: new(gwv1.IPAddressType), Value: "192.0.2.1"},
			},
		},
		Client:     api,
		Clientset:  clientset,
		RestConfig: exec.restConfig(),
		ManifestFS: []fs.FS{&conformance.Manifests, gwdevManifests},
	}
	if err := waitMeshAccepted(api); err != nil {
		t.Fatal(err)
	}
	cs, err := suite.NewConformanceTestSuite(opts)
	if err != nil {
		t.Fatalf("creating the suite: %v", err)
	}

	res := newResults()
	only := sets.New[string]()
	if *onlyTests != "" {
		only.Insert(strings.Split(*onlyTests, ",")...)
	} else if *reportPath != "" {
		// Cleanups run after every subtest, parallel ones included.
		t.Cleanup(func() {
			rep := res.build(implementation(), "experimental", time.Now())
			if err := writeReport(*reportPath, rep); err != nil {
				t.Errorf("writing the report: %v", err)
				return
			}
			t.Logf("report written to %s:\n%s", *reportPath, rep.summaryTable())
			if *realAPI {
				return // compared with the committed report (make conformance-apiserver); the READMEs show the default run
			}
			if err := updateReadme("README.md", "summary", rep, true); err != nil {
				t.Errorf("updating the README summary: %v", err)
			}
			if err := updateReadme("../README.md", "conformance", rep, false); err != nil {
				t.Errorf("updating the repository README's conformance table: %v", err)
			}
			if err := writeUpstreamReport(upstreamReportDir, rep); err != nil {
				t.Errorf("writing the report in upstream's format: %v", err)
			}
		})
	}

	cs.Setup(t, tests.ConformanceTests)
	supported := supportedFeatures()
	for _, test := range append(slices.Clone(tests.ConformanceTests), gwdevTests...) {
		if only.Len() > 0 && !only.Has(test.ShortName) {
			continue // -gwdev.only: a partial run, which writes no report
		}
		t.Run(test.ShortName, func(t *testing.T) {
			t.Cleanup(func() {
				switch {
				case t.Failed():
					res.record(test, failed, "")
				case !t.Skipped():
					res.record(test, passed, "")
				}
			})
			if why := notSupportedReason(test, supported); why != "" {
				res.record(test, notSupported, why)
				t.Skip(why)
			}
			if why := skipReason(test); why != "" {
				res.record(test, skipped, why)
				t.Skip(why)
			}
			test.Run(t, cs)
		})
	}
}

// gwdevServer is the emulator of the running suite (the pod log reactor
// reads its echo logs).
var gwdevServer *emulator.Server

// startGwdev creates gwdev's GatewayClass and starts the emulator and the
// controller loop; both stop when the test ends.
func startGwdev(t *testing.T, api *apiServer, fin *namespaceFinalizer) *kubelet {
	loader, err := watch.NewLoader()
	if err != nil {
		t.Fatal(err)
	}
	gwdevServer = emulator.New(emulator.Config{PortOffset: 0})
	workload := emulator.New(emulator.Config{PortOffset: 0})
	if _, err := buildEchoBasic(t); err != nil {
		t.Fatal(err)
	}
	kube := &kubelet{api: api, workload: workload, t: t, namespaces: fin}
	ctrl := &controller{
		api: api, loader: loader, srv: gwdevServer, kube: kube,
		logf: stderrLogf,
	}
	gc := &gwv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: className},
		Spec:       gwv1.GatewayClassSpec{ControllerName: engine.DefaultControllerName},
	}
	if err := api.Create(context.Background(), gc); err != nil {
		t.Fatalf("creating GatewayClass %s: %v", className, err)
	}
	// The mesh (GEP-3949): gwdev must accept it and list in its status the
	// mesh features this run claims (waitMeshAccepted). The suite would read
	// them from there (ConformanceOptions.MeshName) only when it is given no
	// features, and it is given the claimed ones.
	mesh := &gwxv1a1.XMesh{ObjectMeta: metav1.ObjectMeta{Name: meshName},
		Spec: gwxv1a1.MeshSpec{ControllerName: engine.MeshControllerName}}
	if err := api.Create(context.Background(), mesh); err != nil {
		t.Fatalf("creating XMesh %s: %v", meshName, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { ctrl.run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer scancel()
		if err := gwdevServer.Close(sctx); err != nil {
			t.Logf("closing the emulator: %v", err)
		}
		if err := workload.Close(sctx); err != nil {
			t.Logf("closing the Pod workloads: %v", err)
		}
		kube.stopAll()
	})
	return kube
}

func profileNames() []suite.ConformanceProfileName {
	var out []suite.ConformanceProfileName
	for _, p := range profiles {
		out = append(out, p.Name)
	}
	return out
}

// timeouts are upstream's defaults with the waits for status shortened:
// gwdev writes status within milliseconds, so a minute is plenty, and a
// failing test then costs a minute instead of three.
func timeouts() config.TimeoutConfig {
	c := config.DefaultTimeoutConfig()
	c.GatewayMustHaveAddress = time.Minute
	c.GatewayMustHaveCondition = time.Minute
	c.GWCMustBeAccepted = time.Minute
	c.ListenerSetMustHaveCondition = time.Minute
	c.NamespacesMustBeReady = time.Minute
	return c
}

// generatedFiles are what a run writes (git pathspecs from the repository
// root): a change to them does not make the tested code "dirty".
var generatedFiles = []string{":(exclude)conformance/report.yaml", ":(exclude)conformance/reports",
	":(exclude)conformance/README.md", ":(exclude)README.md"}

// implementation names gwdev in the report; Version is the commit tested,
// with "-dirty" when tracked files other than the generated ones differ
// from it.
func implementation() confv1.Implementation {
	version := "dev"
	if out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output(); err == nil {
		version = "dev-" + strings.TrimSpace(string(out))
		args := append([]string{"-C", "..", "status", "--porcelain", "--untracked-files=no", "--", "."}, generatedFiles...)
		if st, err := exec.Command("git", args...).Output(); err != nil || len(st) > 0 {
			version += "-dirty"
		}
	}
	return confv1.Implementation{
		Organization: "gwdev",
		Project:      "gwdev",
		URL:          "https://github.com/gwdev/gwdev",
		Version:      version,
		Contact:      []string{"https://github.com/gwdev/gwdev/issues"},
	}
}

// waitMeshAccepted waits until gwdev has written Accepted=True on its
// XMesh, with status.supportedFeatures the mesh features the run claims.
func waitMeshAccepted(api *apiServer) error {
	var want []string
	for _, f := range engine.MeshFeatures() {
		want = append(want, string(f))
	}
	deadline := time.Now().Add(time.Minute)
	for {
		var m gwxv1a1.XMesh
		err := api.Get(context.Background(), client.ObjectKey{Name: meshName}, &m)
		var got []string
		for _, f := range m.Status.SupportedFeatures {
			got = append(got, string(f.Name))
		}
		if err == nil && meta.IsStatusConditionTrue(m.Status.Conditions, string(gwxv1a1.MeshConditionAccepted)) && slices.Equal(got, want) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("XMesh %s not accepted by gwdev after a minute (last error %v, status %+v)", meshName, err, m.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
