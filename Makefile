# feedingest: one command to run, one to test. Each installs the Debian packages it needs when missing.
SWIFT ?= swift
WERROR := -Xswiftc -warnings-as-errors
# The command as run and benchmarked: linked with the static Swift runtime and Foundation, which halves its start-up
# (issue 18: 26 -> 13 ms a process here). --static-swift-stdlib compiles every module differently, so it builds in a
# scratch path of its own, beside the ordinary release build the benchmark and the tests use. Linked with the
# toolchain's lld: gold warns about glibc's mktemp inside the toolchain's static Foundation; lld does not.
STATIC := --static-swift-stdlib --scratch-path .build/static -Xswiftc -use-ld=lld

.PHONY: setup build run bench bench-store bench-fetch bench-download test test-asan test-tsan fuzz fuzz-build fuzz-smoke soak clean

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

# The enclosure downloader: a 200 MB file over loopback against curl, peak RSS against a 2 MB file, and a resume after
# a SIGKILL at half (where the resumed request starts, against the committed offset). ARGS="--megabytes 50 --rounds 1".
bench-download: setup
	$(SWIFT) build -c release $(WERROR) --product feedingest
	$(SWIFT) run -c release $(WERROR) feedingest-download-bench $(ARGS)

# The whole test suite, warnings as errors, run offline: in a network namespace with only loopback; then the thread
# sanitizer over the concurrency suites and a few seconds of each fuzz harness (both defined below).
# .ci/run calls exactly this.
test: setup
	$(SWIFT) build --build-tests $(WERROR)
	bash scripts/offline.sh $(SWIFT) test --skip-build
	$(MAKE) test-tsan
	$(MAKE) fuzz-smoke

# Sanitizers, each in a scratch path of its own so the ordinary build is untouched. test-asan: the address sanitizer
# over the whole suite (leak detection off: the Swift runtime and libcurl keep process-lifetime allocations). test-tsan:
# the thread sanitizer over the concurrency suites (Ingest with its store threads and observers, Fetch's transfer thread,
# the store engines, the CLI end to end), with Synchronization.Mutex replaced by a pthread-mutex lock TSan can see
# (Sanitizers/TSanMutex). Any report stops the process (halt_on_error), so a race or a memory error fails the run.
# Peak-memory tests are skipped under both (FEEDINGEST_SANITIZER): shadow memory breaks their bounds.
TSAN_SUITES ?= IngestTests|FetchTests|ArticleStoreTests|DownloadsTests|feedingestTests
test-asan: setup
	FEEDINGEST_ASAN=1 $(SWIFT) build --build-tests --scratch-path .build/asan --sanitize=address $(WERROR)
	FEEDINGEST_ASAN=1 FEEDINGEST_SANITIZER=address ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 \
		bash scripts/offline.sh $(SWIFT) test --skip-build --scratch-path .build/asan --sanitize=address

test-tsan: setup
	FEEDINGEST_TSAN=1 $(SWIFT) build --build-tests --scratch-path .build/tsan --sanitize=thread $(WERROR)
	FEEDINGEST_TSAN=1 FEEDINGEST_SANITIZER=thread TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
		bash scripts/offline.sh $(SWIFT) test --skip-build --scratch-path .build/tsan --sanitize=thread --filter '$(TSAN_SUITES)'

# Fuzzing (Fuzz/FeedingestFuzz, scripts/fuzz.sh): libFuzzer harnesses in one binary, built with the fuzzer and the
# address sanitizer in a scratch path of their own, so the ordinary build is untouched. Each harness runs FUZZ_TIME
# seconds (default 60); HARNESS="feed html" picks some; FUZZ_JOBS=2 forks that many workers per harness. Found inputs
# land in .build/fuzz/work/artifacts/<harness>/ and fail the target.
FUZZ_TIME ?= 60
FUZZ_JOBS ?= 1
HARNESS ?=
fuzz-build: setup
	FEEDINGEST_FUZZ=1 $(SWIFT) build -c release --scratch-path .build/fuzz --disable-dead-strip --sanitize=fuzzer \
		-Xswiftc -sanitize=fuzzer,address -Xswiftc -enable-testing $(WERROR) --product feedingest-fuzz

fuzz: fuzz-build
	FUZZ_TIME=$(FUZZ_TIME) FUZZ_JOBS=$(FUZZ_JOBS) bash scripts/fuzz.sh $(HARNESS)

# The bounded run CI does (part of make test): every harness for FUZZ_SMOKE_TIME seconds (default 5), from a fixed
# libFuzzer seed (FUZZ_SMOKE_SEED) so that a red smoke replays the same inputs; make fuzz explores with a fresh seed.
FUZZ_SMOKE_TIME ?= 5
FUZZ_SMOKE_SEED ?= 1
fuzz-smoke: fuzz-build
	FUZZ_TIME=$(FUZZ_SMOKE_TIME) FUZZ_SEED=$(FUZZ_SMOKE_SEED) FUZZ_WORK=.build/fuzz/smoke bash scripts/fuzz.sh

# The soak: feedingest watch for SOAK_CYCLES fetch cycles (default 10,000) against the fault server, every interval 0,
# its resident memory sampled from /proc: it must not grow more than SOAK_GROWTH_MIB (default 16) after the warm-up.
# Prints the figures and writes them (with every sample) to .build/feedingest-soak.txt. Not part of make test.
SOAK_CYCLES ?= 10000
SOAK_GROWTH_MIB ?= 16
soak: setup
	$(SWIFT) build --build-tests $(WERROR)
	FEEDINGEST_SOAK_CYCLES=$(SOAK_CYCLES) FEEDINGEST_SOAK_GROWTH_MIB=$(SOAK_GROWTH_MIB) FEEDINGEST_SOAK_LOG=$(CURDIR)/.build/feedingest-soak.txt \
		bash scripts/offline.sh $(SWIFT) test --skip-build --filter WatchSoakTests

clean:
	rm -rf .build
