# gwdev — developer commands. `make up` runs gwdev on a bundled sample,
# `make test` runs everything CI runs (vet and gofmt, race tests, a short fuzz).
GO       ?= go
SAMPLE   ?= samples/basic
BIN      := bin/gwdev
# Go 1.27 (gateway-api v1.7.0 needs it): the go command fetches this toolchain
# from the module proxy when the installed one is older (about 10 s, once).
export GOTOOLCHAIN=go1.27.3

.PHONY: all build up check web test vet lint fuzz bench clean conformance conformance-apiserver release tools screenshots

all: build

# Built as a release is (see release): static, without the symbol table and
# DWARF (-s -w) or the builder's paths (-trimpath), the version stamped.
# Static matters beyond the C library: with cgo, kustomize's plugin loader
# makes the linker keep every exported method and export every symbol
# (79 MB instead of 48; bench/binsize.sh prints what each package weighs).
build:
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -o $(BIN) ./cmd/gwdev

# Run gwdev on a bundled sample (watch, serve, TUI).
up: build
	./$(BIN) up $(SAMPLE)

# One-shot check of a sample.
check: build
	./$(BIN) check $(SAMPLE)

# The web view's one third-party asset, Graphviz compiled to WebAssembly
# (@viz-js/viz, pinned by web/package-lock.json), fetched from the npm
# registry and copied into internal/web/assets with its checksum in
# web/assets.sum. The result is committed: only changing the pin needs Node;
# internal/web's TestWebVizAssetIsThePinnedOne fails when they disagree.
web:
	cd web && npm ci --ignore-scripts --no-audit --no-fund && node vendor.mjs

# Pictures of the web view (each view on samples/basic and samples/conflicts)
# into docs/images, taken in headless Chromium (apt-get install chromium).
screenshots:
	GWDEV_SCREENSHOTS=$(CURDIR)/docs/images $(GO) test ./cmd/gwdev -run TestWebScreenshots -count=1 -v

vet:
	$(GO) vet ./...
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# The programs the integration tests drive for real — kube-apiserver (from
# k8s.io/kubernetes, about 8 minutes on 2 cores the first time) and helm —
# built once into a cache outside the repository (.ci/tools.sh). A failed
# build is not fatal here: the tests that need them then skip, saying why.
tools:
	@./.ci/tools.sh >/dev/null || echo "tools: could not build kube-apiserver/helm: the tests that need them will skip"

# The race tests: the tools build in the background meanwhile, progress
# is printed as packages pass, and skipped tests are listed at the end with
# why (.ci/test.sh).
test: vet
	GO=$(GO) ./.ci/test.sh
	# Memory-bound tests that -race slows past their bounds, and allocation and
	# clock-read counts (the race detector's sync.Pool drops items and its
	# instrumentation moves allocations; the clock seams are swapped
	# unsynchronised), run once without it.
	$(GO) test -count=1 -run 'TestHugeHeaderFlood|TestLaneAllocationsPerRequest|TestLaneClockReads|TestKeepAliveClockReads' ./emulator ./emulator/admin ./emulator/h1
	$(GO) test -count=1 -run 'TestAppendPositionsGrowsOnce|TestShadowsReuseTheirIndex' ./engine
	$(GO) test -count=1 -run 'TestYAMLEncoderReusesJSONBuffer' ./internal/report
	# Short fuzz runs bounded by a count, not a time: a time-bounded run can fail
	# with "context deadline exceeded" when its deadline fires while a worker is
	# busy (Go's coordinator races its own cancellation). About 10 s each here.
	$(GO) test -run '^$$' -fuzz FuzzTranslate -fuzztime 20000x ./engine
	$(GO) test -run '^$$' -fuzz FuzzFastParse -fuzztime 12000x ./watch
	$(GO) test -run '^$$' -fuzz FuzzSplitDocuments -fuzztime 15000x ./watch
	$(GO) test -run '^$$' -fuzz FuzzStream -fuzztime 10000x ./internal/lsp

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzTranslate -fuzztime 60s ./engine
	$(GO) test -run '^$$' -fuzz FuzzFastParse -fuzztime 60s ./watch
	$(GO) test -run '^$$' -fuzz FuzzSplitDocuments -fuzztime 60s ./watch
	$(GO) test -run '^$$' -fuzz FuzzStream -fuzztime 60s ./internal/lsp

lint: vet
	@if command -v staticcheck >/dev/null; then staticcheck ./...; else echo "staticcheck not installed: go install honnef.co/go/tools/cmd/staticcheck@latest"; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./engine ./watch
	./bench/check.sh

clean:
	rm -rf bin $(DIST)

# Release binaries for linux, darwin and windows on amd64 and arm64, with
# the version (git describe, or VERSION=v1.2.3) stamped in by -ldflags, and
# their SHA-256 checksums in dist/SHA256SUMS (DIST=elsewhere). Static
# (CGO_ENABLED=0): gwdev needs no C library.
DIST              ?= dist
VERSION           ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
BUILDFLAGS        = -trimpath -ldflags "-s -w -X main.version=$(VERSION)"
RELEASE_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
release:
	rm -rf $(DIST) && mkdir -p $(DIST)
	@set -e; for p in $(RELEASE_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; ext=; [ "$$os" = windows ] && ext=.exe; \
		out=$(DIST)/gwdev_$(VERSION)_$${os}_$${arch}$$ext; echo "$$out"; \
		CGO_ENABLED=0 GOOS=$$os GOARCH=$$arch $(GO) build $(BUILDFLAGS) -o $$out ./cmd/gwdev; \
	done
	cd $(DIST) && { command -v sha256sum >/dev/null && sha256sum gwdev_* || shasum -a 256 gwdev_*; } > SHA256SUMS
	@cat $(DIST)/SHA256SUMS

# Run the official Gateway API conformance suite against gwdev, in process
# (conformance/README.md): the GATEWAY-HTTP, -TLS, -GRPC, -TCP and -UDP
# and the MESH-HTTP and -GRPC profiles, and every other test gwdev supports. Writes
# conformance/report.yaml, the upstream-format report in
# conformance/reports/, the summaries in both READMEs and the suite's log
# (conformance/conformance.log); fails when any conformance test fails (one
# that passes when re-run alone is reported FLAKY and not counted), when a test
# that passed in the committed report does not pass now, or when the report's
# own unit tests fail. Binds 127.0.0.x ports 80, 443, 8080…:
# run as root (or with ip_unprivileged_port_start=0).
conformance:
	@cd conformance && { git show HEAD:conformance/report.yaml > .baseline.yaml 2>/dev/null || cp report.yaml .baseline.yaml 2>/dev/null || rm -f .baseline.yaml; }
	@cd conformance && rm -f report.yaml && { $(GO) test -count=1 -timeout 60m -run '^TestConformance$$' -v . -args -gwdev.conformance -gwdev.report report.yaml > conformance.log 2>&1; \
		echo "conformance suite exited with status $$? (failing conformance tests fail it; see conformance/report.yaml and conformance/conformance.log)"; }
	cd conformance && $(GO) test -count=1 -timeout 60m -run '^(TestNoRegression|TestReport.*)$$' -v . -args -gwdev.report report.yaml -gwdev.baseline .baseline.yaml -gwdev.recheck

# The same suite against a real kube-apiserver on etcd (the one `make tools`
# builds; Debian's etcd-server) instead of the fake API, compared with the
# committed conformance/report.yaml: fails when a test that passes there
# does not pass here. A real API server refuses loopback EndpointSlice
# addresses, so the run has its own network namespace (unshare) with
# 10.244.0.0/16 on its loopback interface for the pod IPs; the test binary
# and echo-basic are built before, outside it. Writes
# conformance/report-apiserver.yaml and conformance/conformance-apiserver.log.
conformance-apiserver:
	@./.ci/tools.sh kube-apiserver >/dev/null
	cd conformance && $(GO) test -c -o .conformance.test . && $(GO) build -o .echo-basic sigs.k8s.io/gateway-api-conformance-images/echo-basic
	@cd conformance && rm -f report-apiserver.yaml && { unshare -rn sh -c 'ip link set lo up && ip addr add 10.244.0.0/16 dev lo && \
		exec ./.conformance.test -test.count=1 -test.timeout=60m -test.run "^TestConformance$$" -test.v -gwdev.conformance -gwdev.apiserver \
		-gwdev.podnet 10.244 -gwdev.echobasic .echo-basic -gwdev.report report-apiserver.yaml' > conformance-apiserver.log 2>&1; \
		echo "conformance suite (real API server) exited with status $$? (see conformance/report-apiserver.yaml and conformance/conformance-apiserver.log)"; }
	cd conformance && $(GO) test -count=1 -run '^TestNoRegression$$' -v . -args -gwdev.report report-apiserver.yaml -gwdev.baseline report.yaml
