GO ?= go
DATA ?= ./data
ADDR ?= 127.0.0.1:8080
PKGS = ./...

.PHONY: run build test test-short bench lint fuzz deps-check deploy-check errcheck tools

## run: start the service on the embedded defaults (SQLite in $(DATA), in-process bus, in-memory limits)
run:
	$(GO) run ./cmd/fleethub serve --addr $(ADDR) --data $(DATA)

## build: the server (bin/fleethub) and the load generators (bin/fleethub-bench)
build:
	$(GO) build -o bin/fleethub ./cmd/fleethub
	$(GO) build -o bin/fleethub-bench ./cmd/fleethub-bench

## test: every test, with the race detector; PostgreSQL and Redis tests read
## FLEETHUB_TEST_DATABASE_URL and FLEETHUB_TEST_REDIS_URL and skip without them.
## The model tests' full seed counts run again without the detector, which
## makes the server five to ten times slower (race_on_test.go). The tests
## that build and drive a server child (the crash harnesses, the load
## generators against a server) or contract a whole city (the routing
## engine's checks on every real extract, the Columbus matrix) skip
## themselves under the detector and run only in that second pass, where
## the child's build reuses the packages the test binaries compiled; so do
## the console's browser tests and the engines' tests over real data (map
## matching's simulated drives, geocoding's held-out addresses), and the
## solver's randomized tests and pinned plans run a quarter of their seeds
## under it: the engines' packages run whole in the second pass. The second pass runs
## as three groups side by side: the crash harnesses, which mostly wait for
## their child to restart, the engines' packages, and the rest.
## The race pass runs at least four packages at a time (RACE_PARALLEL: the
## processors, or 4 where there are fewer), beside go vet: many of its
## tests wait on real time (receivers that answer slowly, brokers that
## rebalance), so two at a time on two cores left one idle for a third of
## the pass.
## Test binaries are linked without DWARF (-ldflags=-w): stack traces and
## race reports read the symbol table, and each link takes a quarter less.
test test-vet test-race test-crash test-engines test-server: export GOFLAGS := $(filter-out -ldflags=-w,$(GOFLAGS)) -ldflags=-w
test:
	$(MAKE) --no-print-directory -j2 test-vet test-race
	$(GO) test -count=1 -run '^$$' ./internal/routing/ ./cmd/fleethub/ ./cmd/fleethub-bench/
	$(MAKE) --no-print-directory -j3 test-crash test-engines test-server

# the first pass of make test: go vet beside the race pass, whose tests
# leave the cores idle while they wait on real time
.PHONY: test-vet test-race
test-vet:
	$(GO) vet $(PKGS)
RACE_PARALLEL ?= $(shell n=$$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1); echo $$(( n > 4 ? n : 4 )))
# the solver's packages (internal/vrp, api/optimization) run their
# searches on both cores for seconds at a time, ten times slower under the
# detector: they run in test-engines without it, and fleet/optimization
# runs the solver's parallel searches under it here
RACE_PKGS = $(shell $(GO) list $(PKGS) | grep -v -E '/(internal/vrp|api/optimization)$$')
test-race:
	$(GO) test -race -count=1 -p $(RACE_PARALLEL) -timeout 12m $(RACE_PKGS)

# the second pass of make test, in three groups (see test): the crash
# harnesses, which mostly wait for their child to restart, beside the
# engines' packages (built and run in that wait) and the server's tests
.PHONY: test-crash test-engines test-server
test-crash:
	$(GO) test -count=1 -timeout 10m -parallel 3 -run '^(TestCrash[A-Za-z]*|TestModelCrash)$$' ./cmd/fleethub/
test-engines:
	$(GO) test -count=1 -timeout 8m ./internal/vrp/ ./api/optimization/ ./internal/mapmatch/ ./internal/geocode/
test-server:
	$(GO) test -count=1 -timeout 8m -run '^TestRealExtracts$$' ./internal/routing/
	$(GO) test -count=1 -timeout 8m -run '^(TestModel(Embedded|TwoNodes)|TestRoutingMatrix|TestModesAgainstAServer|TestConsole[A-Za-z]*)$$' ./cmd/fleethub/ ./cmd/fleethub-bench/

test-short:
	$(GO) test -count=1 $(PKGS)

## bench: Go benchmarks of the hot paths
bench:
	$(GO) test -run '^$$' -bench . -benchmem $(PKGS)

## fuzz: a short run of every fuzz target (FUZZTIME each, default 10s);
## seeds live in each package's testdata/fuzz and run with every make test
fuzz:
	./.ci/fuzz

tools:
	$(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2

## lint: gofmt, go vet, staticcheck, deps-check, errcheck
lint: tools
	@test -z "$$(gofmt -l . | tee /dev/stderr)" || (echo "gofmt: files above need formatting" && exit 1)
	$(GO) vet $(PKGS)
	$$($(GO) env GOPATH)/bin/staticcheck $(PKGS)
	$(MAKE) deps-check
	$(MAKE) errcheck

## errcheck: no error discarded with _ outside tests, but for the calls on
## the allow-list in .ci/errcheck (a module of its own, typed with go/types)
errcheck:
	cd .ci/errcheck && $(GO) run . ../..

## deploy-check: the compose file, the Kubernetes manifests and the Grafana
## dashboard checked offline against their schemas (.ci/manifests, a module of its own)
deploy-check:
	cd .ci/manifests && $(GO) run . ../../deploy

## deps-check: dependencies point one way (see docs/architecture.md)
deps-check:
	@./.ci/deps-check

## console: vendor the console's map library (Leaflet, pinned) from npm into
## api/console/dist/leaflet; the output is committed, so `make run` needs no Node
LEAFLET_VERSION ?= 1.9.4
.PHONY: console
console:
	@tmp="$$(mktemp -d)" && trap 'rm -rf "$$tmp"' EXIT && \
	cd "$$tmp" && npm pack --silent leaflet@$(LEAFLET_VERSION) >/dev/null && tar -xzf leaflet-$(LEAFLET_VERSION).tgz && \
	cd - >/dev/null && rm -rf api/console/dist/leaflet && mkdir -p api/console/dist/leaflet && \
	cp "$$tmp/package/dist/leaflet.js" "$$tmp/package/dist/leaflet.css" "$$tmp/package/LICENSE" api/console/dist/leaflet/ && \
	echo "leaflet@$(LEAFLET_VERSION) from the npm registry" > api/console/dist/leaflet/VERSION && \
	ls -l api/console/dist/leaflet
