# leaselab: one build path for people, CI and the Dockerfile.
GO        ?= go
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X main.version=$(VERSION)
BIN       := bin/leaselab
ADDR      ?= 127.0.0.1:8080
DB        ?= ./leaselab.db
TESTFLAGS ?= -timeout 20m
WASM_DIR  := web/play/ui/static/wasm
WASM_BIN  := bin/candidate.wasm
WASM      := $(WASM_DIR)/candidate.wasm.gz
WASM_BR   := $(WASM_DIR)/candidate.wasm.br
WASM_SRC  := $(shell find wasm -name '*.go' 2>/dev/null) go.mod go.sum
GOROOT    := $(shell $(GO) env GOROOT)
TEMPL_SRC := $(wildcard templates/*.templ)

export CGO_ENABLED = 0

.DEFAULT_GOAL := help

.PHONY: help
help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  make %-16s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: run
run: build ## start the playground on http://127.0.0.1:8080 with ./leaselab.db
	$(BIN) serve --addr $(ADDR) --db $(DB)

.PHONY: build
build: generate wasm ## build bin/leaselab, one static binary with everything embedded
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/leaselab

# The platforms a release is built for: static binaries, the browser candidate embedded.
RELEASE_PLATFORMS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64
DIST              := dist

.PHONY: release
release: generate wasm ## static binaries for linux, darwin and windows on amd64 and arm64 in dist/, with SHA256SUMS
	rm -rf $(DIST) && mkdir -p $(DIST)
	@for p in $(RELEASE_PLATFORMS); do \
		os=$${p%/*}; arch=$${p#*/}; ext=; [ $$os = windows ] && ext=.exe; \
		out=$(DIST)/leaselab-$(VERSION)-$$os-$$arch$$ext; \
		echo "$$out"; \
		GOOS=$$os GOARCH=$$arch $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $$out ./cmd/leaselab || exit 1; \
	done
	cd $(DIST) && sha256sum leaselab-* > SHA256SUMS

.PHONY: generate
generate: ## generate the Go code of the templ components (templates/*_templ.go)
	$(GO) tool templ generate -log-level warn -path templates

.PHONY: check-generated
check-generated: generate ## fail when the committed templates/*_templ.go are not what generate writes
	@git diff --exit-code -- templates || { echo "templates/*_templ.go are stale: run make generate and commit the result" >&2; exit 1; }

.PHONY: wasm
wasm: $(WASM) $(WASM_BR) ## build the browser candidate into web/play/ui/static/wasm (committed: go install needs it), with wasm_exec.js from the same GOROOT
	@cmp -s $(GOROOT)/lib/wasm/wasm_exec.js $(WASM_DIR)/wasm_exec.js || cp $(GOROOT)/lib/wasm/wasm_exec.js $(WASM_DIR)/wasm_exec.js

# The candidate and wasm_exec.js must come from the same Go: the JS glue and the runtime change
# together between releases. Only the compressed candidate is embedded and committed, with
# gzip and with Brotli (a quarter smaller, for browsers that take br: all of them over HTTPS);
# the server decompresses the gzip variant for a client that takes neither.
$(WASM_BIN): $(WASM_SRC)
	@mkdir -p $(dir $@)
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags '-s -w' -o $@ ./wasm/cmd/candidate

# compress writes $@, $< compressed by the command $(2), unless $@ already holds the bytes of $<
# as the command $(1) decompresses them (a fresh clone's usual case): then it is only marked
# current, as Brotli at its best quality takes ten seconds.
compress = @if $(1) < $@ 2>/dev/null | cmp -s - $<; then touch $@; \
	else echo "$(2) < $< > $@"; $(2) < $< > $@; fi

$(WASM): $(WASM_BIN)
	$(call compress,gzip -dc,gzip -9 -n -c)

$(WASM_BR): $(WASM_BIN)
	$(call compress,$(GO) run ./cmd/internal/wasmbr -d,$(GO) run ./cmd/internal/wasmbr)

.PHONY: check-wasm
check-wasm: wasm ## fail when the committed browser candidate is not what its sources build
	@git diff --exit-code --stat -- $(WASM_DIR) || { echo "$(WASM_DIR) is stale: run make wasm and commit the result (built with $$($(GO) version))" >&2; exit 1; }

.PHONY: test-deps
# What the tests need beyond Go, installed when missing: Debian's chromium (the browser tests),
# python3-kubernetes and Node.js (the official Python and JavaScript clients), and
# @kubernetes/client-node at the version package-lock.json pins, from the npm registry.
CLIENT_JS := cmd/leaselab/testdata/clients/js
test-deps: ## install what the tests need beyond Go: chromium, the Python and JavaScript Kubernetes clients
	@missing=; \
	command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || missing="$$missing chromium"; \
	python3 -c 'import kubernetes' >/dev/null 2>&1 || /usr/bin/python3 -c 'import kubernetes' >/dev/null 2>&1 || missing="$$missing python3-kubernetes"; \
	command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || missing="$$missing nodejs npm"; \
	if [ -n "$$missing" ]; then \
		if ! command -v apt-get >/dev/null 2>&1; then \
			echo "missing:$$missing, and apt-get is not available: install them yourself (a 'chromium' command, Python's kubernetes package, Node.js with npm)" >&2; exit 1; \
		fi; \
		SUDO=; if [ "$$(id -u)" != 0 ]; then SUDO=sudo; fi; \
		echo "installing Debian's$$missing for the tests"; \
		$$SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -q --no-install-recommends $$missing \
			|| { echo "could not install$$missing: run 'sudo apt-get install$$missing' and try again" >&2; exit 1; }; \
	fi
	@if [ ! -f $(CLIENT_JS)/node_modules/.package-lock.json ] || [ $(CLIENT_JS)/package-lock.json -nt $(CLIENT_JS)/node_modules/.package-lock.json ]; then \
		echo "installing @kubernetes/client-node for the JavaScript client test"; \
		npm ci --prefix $(CLIENT_JS) --no-audit --no-fund --loglevel=error \
			|| { echo "could not install the JavaScript client: run 'npm ci --prefix $(CLIENT_JS)' and try again" >&2; exit 1; }; \
	fi

.PHONY: test
test: check-generated check-wasm test-deps ## run every test, the browser tests included
	$(GO) vet ./...
	$(GO) test -count=1 $(TESTFLAGS) ./...

.PHONY: race
race: wasm test-deps ## run every test with the race detector
	CGO_ENABLED=1 $(GO) test -race -count=1 ./...

BENCH_PKGS ?= ./store/... ./web/api/apiserver/ ./cmd/leaselab/
BENCH_TIME ?= 10s

.PHONY: bench
bench: build ## run the Go benchmarks of the hot paths, then a short leaselab bench round against a fresh server
	$(GO) test -run '^$$' -bench . -benchmem -count 5 $(BENCH_PKGS)
	@dir=$$(mktemp -d); \
	$(BIN) serve --addr 127.0.0.1:0 --db $$dir/bench.db --log-level warn >$$dir/serve.out 2>&1 & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null; rm -rf $$dir' EXIT INT TERM; \
	for i in $$(seq 100); do grep -q 'serving on' $$dir/serve.out && break; sleep 0.1; done; \
	url=$$(sed -n 's/.* serving on \([^ ]*\) .*/\1/p' $$dir/serve.out); \
	test -n "$$url" || { cat $$dir/serve.out; exit 1; }; \
	set -e; \
	for w in "renew --clients 64" "renew --clients 64 --rate 1000" "watch --watchers 1000" "heartbeat --clients 256 --leases 10000 --interval 10s"; do \
		echo "== leaselab bench $$w --duration $(BENCH_TIME)"; \
		$(BIN) bench $$w --duration $(BENCH_TIME) --server $$url --db $$dir/bench.db --progress 0; \
	done

# Each fuzz target runs FUZZTIME on its own (go test -fuzz takes one target in one package);
# make test runs their seed corpora (f.Add and testdata/fuzz) as ordinary tests.
FUZZTIME ?= 1m
FUZZ_TARGETS ?= ./web/api/apiserver:FuzzCreate ./web/api/apiserver:FuzzPatch ./web/api/apiserver:FuzzListQuery \
	./web/api/apiserver:FuzzContinue ./web/api/apiserver:FuzzResourceVersion ./web:FuzzWebSocketMessages \
	./web/api/auth:FuzzParseTokenFile ./web/api/auth:FuzzWebSocketToken ./web/api/auth:FuzzBearerToken \
	./store/changelog:FuzzReader

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME (default 1m) each; new crashers land in testdata/fuzz
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$name ($$pkg) for $(FUZZTIME)"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

.PHONY: clean
clean: ## remove build output
	rm -rf bin
