# leaselab: one build path for people, CI and the Dockerfile.
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
BIN       := bin/leaselab
ADDR      ?= 127.0.0.1:8080
DB        ?= ./leaselab.db
TESTFLAGS ?=

export CGO_ENABLED = 0

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  make %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: build ## start the playground on http://127.0.0.1:8080 with ./leaselab.db
	$(BIN) serve --addr $(ADDR) --db $(DB)

.PHONY: build
build: ## build bin/leaselab, one static binary with everything embedded
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/leaselab

.PHONY: test
test: ## run every test
	$(GO) vet ./...
	$(GO) test -count=1 $(TESTFLAGS) ./...

.PHONY: race
race: ## run every test with the race detector
	CGO_ENABLED=1 $(GO) test -race -count=1 ./...

.PHONY: bench
bench: ## run the Go benchmarks
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./...

.PHONY: clean
clean: ## remove build output
	rm -rf bin
