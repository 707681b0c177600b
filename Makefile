# Foyer: `make run` starts the demo stack on embedded defaults; `make test` runs everything.
SHELL := /bin/bash
GO    ?= go
BIN   := bin

.PHONY: all build run test test-short chaos services bench bench-go lint fuzz clean rehearsal

all: build

build:
	$(GO) build -o $(BIN)/foyer ./cmd/foyer
	$(GO) build -o $(BIN)/onsale ./cmd/onsale
	$(GO) build -o $(BIN)/booking ./cmd/booking

# The demo: Foyer on :8080 in front of the booking service, memory stores, no servers needed.
# Its ports, checked before anything starts: make run FOYER_PORT=8081 FOYER_ADMIN_PORT=2020 \
# BOOKING_PORT=9100 BOOKING_OPS_PORT=9101 runs a second one beside the first.
FOYER_PORT       ?= 8080
FOYER_ADMIN_PORT ?= 2019
BOOKING_PORT     ?= 9000
BOOKING_OPS_PORT ?= 9001
run: build
	@FOYER_PORT=$(FOYER_PORT) FOYER_ADMIN_PORT=$(FOYER_ADMIN_PORT) BOOKING_PORT=$(BOOKING_PORT) \
		BOOKING_OPS_PORT=$(BOOKING_OPS_PORT) BIN=$(BIN) ./scripts/run.sh

services:
	@./scripts/services.sh
	@./scripts/deps.sh

# Everything: vet, unit, conformance, integration (PostgreSQL, Redis, Caddy), the fault
# suite, fuzz seeds. A line per package as it finishes; the last lines count the tests
# and name every integration test that skipped and what it lacked.
GOTEST = set -o pipefail; $(GO) test -race -count=1 -json
# go build -v names each package as it compiles it (nothing for what the build cache
# holds): numbered, that is the progress of the long silent part, compiling Caddy and
# the rest twice (for vet, and with -race for the tests).
# The fault tests whose bounds are latencies of real processes (revocations reaching every node
# within 0.6 s of Redis answering; a newcomer's 503 at once while Redis hangs). Beside every
# other package on two cores, the CPU alone can push them over, so they run after, alone.
ALONE = ^(TestFaultRevocationsReachEveryNodeAfterOutage|TestFaultJoinFloodRedisDown)$$
PROGRESS = awk '{ printf "  %4d  %s\n", NR, $$0; fflush() }'
test: services
	@echo "build: compiling every package (a line per package compiled)"
	@set -o pipefail; $(GO) build -v ./... 2>&1 | $(PROGRESS)
	@echo "build: compiling every package with -race, for the tests"
	@set -o pipefail; $(GO) build -race -v ./... 2>&1 | $(PROGRESS)
	@echo "vet: vetting every package"
	@$(GO) vet ./... && echo "  vet: no findings"
	@echo "test: building the test binaries, then running them (a line per package as it finishes)"
	@$(GOTEST) -timeout 25m -skip '$(ALONE)' ./... | $(GO) run ./internal/testreport
	@echo "test: the fault tests that bound a latency, with nothing else running"
	@$(GOTEST) -timeout 5m -run '$(ALONE)' ./gateway/integration/ | $(GO) run ./internal/testreport

# The fault suite alone: real processes killed with -9, Redis restarted empty, a Cluster
# master failed over, the booking service killed mid-checkout. make test runs it too.
# Then the model-based admission test with a long budget (make test gives it 60 s).
chaos: services
	@$(GOTEST) -timeout 20m -run '^TestFault' ./... | $(GO) run ./internal/testreport
	@FOYER_MODEL_LOSSES=1 FOYER_MODEL_BUDGET=$${FOYER_MODEL_BUDGET:-10m} $(GOTEST) -timeout 30m -run '^TestAdmissionModel$$' ./waitingroom/ | $(GO) run ./internal/testreport

test-short:
	$(GO) test -short -count=1 ./...

# Benchmarks, as ratios against a baseline measured in the same run: every figure of the
# Numbers table of docs/benchmarks.md, measured by wrk and by our own generator, written there.
bench: build services
	@./scripts/deps.sh wrk
	$(BIN)/onsale bench numbers -doc docs/benchmarks.md -store redis://127.0.0.1:6379
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./waitingroom/... ./gateway/

# An on-sale rehearsed on this machine: 100,000 fans for 10,000 seats, memory stores.
# make rehearsal REHEARSAL_FLAGS='-fans 5000 -seats 1000' for a quick one; bin/onsale rehearsal -h for all flags.
rehearsal: build
	$(BIN)/onsale rehearsal $(REHEARSAL_FLAGS)

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzOpenTicket -fuzztime 30s ./waitingroom/
	$(GO) test -run '^$$' -fuzz FuzzVerifyPass -fuzztime 30s ./waitingroom/pass/
	$(GO) test -run '^$$' -fuzz FuzzCaddyfile -fuzztime 30s ./gateway/

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

clean:
	rm -rf $(BIN) .run
