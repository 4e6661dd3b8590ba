package watch

//go:generate go run ./internal/crdgen -bundles crdbundles
