package main

import (
	"os"
	"testing"

	"github.com/gwdev/gwdev/internal/app"
)

// TestMain lets this test binary be the web view's layout child
// (app.LayoutGraphApart runs the executable itself), as main does: up's
// tests run up in this process.
func TestMain(m *testing.M) {
	app.RunLayoutChild()
	os.Exit(m.Run())
}
