# Foyer: make run (the demo stack on embedded defaults) and make test (everything).
SHELL := /bin/bash
GO    ?= go
BIN   := bin

.PHONY: all build run test test-unit services bench lint clean

all: build

build:
	$(GO) build -o $(BIN)/foyer ./cmd/foyer

services:
	@./scripts/services.sh

test: services
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 20m ./...

test-unit:
	$(GO) test -short -count=1 ./...

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2 ./...

clean:
	rm -rf $(BIN) .run
