package engine

import (
	"os"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/gateway-api/pkg/features"
)

// TestSupportedFeatures: every name is a feature of the API version gwdev
// implements, the list is sorted and has no duplicate, and it fits the
// GatewayClass status limit (MaxItems=64).
func TestSupportedFeatures(t *testing.T) {
	fs := SupportedFeatures()
	if len(fs) > 64 {
		t.Errorf("%d features; status.supportedFeatures holds at most 64", len(fs))
	}
	if !slices.IsSorted(fs) || len(slices.Compact(slices.Clone(fs))) != len(fs) {
		t.Errorf("not sorted or with duplicates: %v", fs)
	}
	for _, f := range fs {
		if features.GetFeature(f).Name != f {
			t.Errorf("%s is not a Gateway API %s feature", f, APIVersion)
		}
	}
	for _, f := range ExtendedFeatures() {
		if !slices.Contains(fs, f) {
			t.Errorf("extended feature %s missing from SupportedFeatures", f)
		}
	}
}

// TestAPIVersionIsGoMod: APIVersion is the gateway-api version go.mod
// requires.
func TestAPIVersionIsGoMod(t *testing.T) {
	data, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := "\tsigs.k8s.io/gateway-api " + APIVersion + "\n"
	if !strings.Contains(string(data), want) {
		t.Errorf("go.mod does not require sigs.k8s.io/gateway-api %s", APIVersion)
	}
}
