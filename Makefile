# partbench — thin wrapper around CMake. `make run` and `make test` are the
# two set-up commands; both install their own dependencies first.

BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
MODEL      ?= models/resnet18.onnx
LAYOUT     ?= layouts/manycore-16.lua
FUZZ_SECONDS ?= 30
CMAKE_FLAGS ?=
ifdef CI
CMAKE_FLAGS += -DPB_WERROR=ON
endif

# Debian packages of DESIGN.md's dependency table, plus the tools the tests use
# (Open MPI: tune/shard/train across ranks, optional at build time).
# OpenBLAS is the *serial* build: igraph links libblas.so.3, and the pthread
# build's thread pool (started by its constructor) spun in sched_yield in every
# partbench process, e.g. half the CPU time of `partbench info`; the tuner's
# OpenBLAS roof is single-threaded anyway.
DEPS = build-essential cmake pkg-config \
       libncurses-dev liblua5.4-dev libgraphviz-dev graphviz libigraph-dev \
       libcmocka-dev libprotobuf-c-dev protobuf-c-compiler libonnx-dev \
       libglpk-dev glpk-utils libjansson-dev libxgboost-dev libopenblas-serial-dev \
       libonnx-testdata python3-onnx coinor-cbc tmux libxml2-utils \
       clang libclang-rt-14-dev clang-format cppcheck nodejs \
       libopenmpi-dev openmpi-bin

.PHONY: all deps deps-ort build run test asan fuzz lint bench clean

all: build

deps:
	@missing=$$(for p in $(DEPS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' || printf ' %s' $$p; done); \
	if [ -z "$$missing" ]; then echo "deps: all installed"; exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "deps: missing packages:$$missing"; \
	  echo "deps: run as root: apt-get update && apt-get install -y$$missing"; exit 1; fi; \
	echo "deps: installing$$missing"; \
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing
	@$(MAKE) --no-print-directory deps-ort

# ONNX Runtime (CPU) for the extract tests: npm package onnxruntime-node,
# pinned by tests/ort/package-lock.json. --ignore-scripts: its install script
# would download GPU binaries; the CPU library ships inside the package.
deps-ort:
	@if [ -f tests/ort/node_modules/.package-lock.json ] && \
	  [ tests/ort/node_modules/.package-lock.json -nt tests/ort/package-lock.json ]; then \
	  echo "deps: onnxruntime-node installed"; \
	else cd tests/ort && npm ci --ignore-scripts --no-audit --no-fund; fi

$(BUILD)/Makefile: CMakeLists.txt
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS)

build: $(BUILD)/Makefile
	cmake --build $(BUILD) -j $(JOBS)

run: deps build
	./$(BUILD)/partbench $(MODEL) --layout $(LAYOUT)

test: deps build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DPB_SANITIZE=ON $(CMAKE_FLAGS)
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0 UBSAN_OPTIONS=print_stacktrace=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	  PB_SANITIZED=1 ctest --output-on-failure -j $(JOBS)

fuzz: deps
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPB_FUZZ=ON
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@for f in $(FUZZ_BUILD)/fuzz_*; do \
	  name=$$(basename $$f); corpus=$(FUZZ_BUILD)/corpus-$$name; mkdir -p $$corpus; \
	  echo "fuzz: $$name for $(FUZZ_SECONDS)s"; \
	  ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
	    $$f -max_total_time=$(FUZZ_SECONDS) -rss_limit_mb=2048 \
	    -max_len=1048576 $$corpus tests/fuzz/seeds/$$name || exit 1; \
	done

# cppcheck runs without the system headers (missingIncludeSystem), so library
# iteration macros such as jansson's json_array_foreach are unknown to it
# (unknownMacro); everything else it reports fails the target.
# check_layers.py: no file includes a header of a layer above its own, no
# include circle in core/ (docs/architecture.md); tests/e2e/lint_layers.sh runs it too.
# check_file_door.py: no file of core/ or tui/ opens a path outside the one door
# (core/util/file_door.h, atomic_file.h; docs/security.md); tests/e2e/lint_file_door.sh.
lint:
	python3 tests/lint/check_layers.py
	python3 tests/lint/check_file_door.py
	python3 tests/lint/check_handler_size.py
	clang-format --dry-run --Werror $$(git ls-files '*.c' '*.h')
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	  --suppress=missingIncludeSystem --suppress=unknownMacro --inline-suppr -I core core tui

bench: build
	@echo "benchmarks: bench/*.sh and build/bench_*; bench/RESULTS.md records each one's command and results"

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD)
