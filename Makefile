# feedingest: one command to run, one to test. Each installs the Debian packages it needs when missing.
SWIFT ?= swift
WERROR := -Xswiftc -warnings-as-errors
# The command as run and benchmarked: linked with the static Swift runtime and Foundation, which halves its start-up
# (issue 18: 26 -> 13 ms a process here). --static-swift-stdlib compiles every module differently, so it builds in a
# scratch path of its own, beside the ordinary release build the benchmark and the tests use. Linked with the
# toolchain's lld: gold warns about glibc's mktemp inside the toolchain's static Foundation; lld does not.
STATIC := --static-swift-stdlib --scratch-path .build/static -Xswiftc -use-ld=lld

.PHONY: setup build run bench bench-store bench-fetch test clean

setup:
	@bash scripts/setup.sh

build: setup
	$(SWIFT) build $(WERROR)

# The main job: build the release command and run `feedingest feeds.txt` on the default store
# ($FEEDINGEST_STORE, else $XDG_DATA_HOME/feedingest/feedingest.sqlite, else ~/.local/share/...).
# New articles go to stdout as NDJSON (so `make run | jq` works: the build's output goes to stderr), the summary to
# stderr. FEEDS=other.txt runs another list; ARGS passes options, e.g. make run ARGS="--store /tmp/s.sqlite".
FEEDS ?= feeds.txt
run: setup
	@$(SWIFT) build -c release $(STATIC) $(WERROR) --product feedingest >&2
	@"$$($(SWIFT) build -c release $(STATIC) --show-bin-path)/feedingest" "$(FEEDS)" $(ARGS)

# The benchmark: ExpatXML and the pipeline against Foundation's XMLParser and raw libexpat, over HTTP, end to end.
# The end-to-end and latency sections run the feedingest command built beside the benchmark, so build it first.
# Pass options with ARGS, e.g. make bench ARGS="--only http --quick".
bench: setup
	$(SWIFT) build -c release $(STATIC) $(WERROR) --product feedingest
	$(SWIFT) build -c release $(WERROR) --product feedingest-cnoop
	$(SWIFT) build -c release $(WERROR) --product feedingest-bench
	cp "$$($(SWIFT) build -c release $(STATIC) --show-bin-path)/feedingest" "$$($(SWIFT) build -c release --show-bin-path)/feedingest"
	$(SWIFT) run -c release $(WERROR) feedingest-bench $(ARGS)

# The store's throughput (ArticleStore alone, then parsing the 200 MB fixture into a fresh store: pass
# ARGS="--feed .build/bench-fixtures/rss-160000-v1.xml", which make bench generates) and Fetch over a loopback nginx
# against parsing the same file. Separate executables, each printing a table and JSON lines.
bench-store: setup
	$(SWIFT) run -c release $(WERROR) feedingest-store-bench $(ARGS)

bench-fetch: setup
	$(SWIFT) run -c release $(WERROR) feedingest-fetch-bench $(ARGS)

# The whole test suite, warnings as errors, run offline: in a network namespace with only loopback.
# .ci/run calls exactly this.
test: setup
	$(SWIFT) build --build-tests $(WERROR)
	bash scripts/offline.sh $(SWIFT) test --skip-build

clean:
	rm -rf .build
