package web

import (
	"os"
	"testing"

	"github.com/gwdev/gwdev/internal/app"
)

// TestMain lets this test binary be the web view's layout child
// (app.LayoutGraphApart runs the executable itself), as gwdev's main does.
func TestMain(m *testing.M) {
	app.RunLayoutChild()
	os.Exit(m.Run())
}
