# gwdev — developer commands. `make up` runs gwdev on a bundled sample,
# `make test` runs everything CI runs (vet, race tests, a short fuzz).
GO       ?= go
SAMPLE   ?= samples/basic
BIN      := bin/gwdev
export GOTOOLCHAIN := local

.PHONY: all build up check test vet lint fuzz bench clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/gwdev

# Run gwdev on a bundled sample (watch, serve, TUI).
up: build
	./$(BIN) up $(SAMPLE)

# One-shot check of a sample.
check: build
	./$(BIN) check $(SAMPLE)

vet:
	$(GO) vet ./...

test: vet
	$(GO) test -race -count=1 ./...
	$(GO) test -run '^$$' -fuzz FuzzTranslate -fuzztime 10s ./engine

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzTranslate -fuzztime 60s ./engine

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@if command -v staticcheck >/dev/null; then staticcheck ./...; else echo "staticcheck not installed: go install honnef.co/go/tools/cmd/staticcheck@latest"; fi

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./engine ./watch
	./bench/check.sh

clean:
	rm -rf bin
