# feedingest: one command to run, one to test. Each installs the Debian packages it needs when missing.
SWIFT ?= swift
WERROR := -Xswiftc -warnings-as-errors

.PHONY: setup build run bench test clean

setup:
	@bash scripts/setup.sh

build: setup
	$(SWIFT) build $(WERROR)

# The main job for now: the benchmark, ExpatXML against Foundation's XMLParser and raw libexpat.
run: setup
	$(SWIFT) run -c release $(WERROR) feedingest-bench

bench: run

# The whole test suite, warnings as errors, run offline: in a network namespace with only loopback.
# .ci/run calls exactly this.
test: setup
	$(SWIFT) build --build-tests $(WERROR)
	bash scripts/offline.sh $(SWIFT) test --skip-build

clean:
	rm -rf .build
