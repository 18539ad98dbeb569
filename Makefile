# The two commands of README.md, and the rest. Every target installs missing Debian packages
# first (scripts/install-deps), so a fresh Debian 12 machine needs nothing else.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
BENCH_BUILD ?= build-bench
VERIFIER_BUILD ?= build-verifier
JOBS       ?= $(shell nproc)
FUZZ_SECONDS ?= 60

SOURCES = $(shell git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')

.PHONY: all deps build build-asan build-verifier check test test-asan format format-check demo bench fuzz clean

all: build

deps:
	@scripts/install-deps

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j$(JOBS)

build-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSWORN_SANITIZE=ON >/dev/null
	cmake --build $(ASAN_BUILD) -j$(JOBS)

# The auditor's verifier on its own (verifier/ links only OpenSSL and protobuf-c).
build-verifier: deps
	cmake -S verifier -B $(VERIFIER_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(VERIFIER_BUILD) -j$(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-asan: build-asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0 \
		LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j$(JOBS)

format-check: deps
	clang-format --dry-run --Werror $(SOURCES)

format: deps
	clang-format -i $(SOURCES)

# Every test, in the normal build and in the ASan + UBSan build, the format check, and the
# verifier built standalone.
check: format-check build-verifier test test-asan

demo: build
	scripts/demo $(BUILD)

bench: deps
	cmake -S . -B $(BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BENCH_BUILD) -j$(JOBS)
	scripts/bench $(BENCH_BUILD)

fuzz: deps
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DSWORN_FUZZ=ON >/dev/null
	cmake --build $(FUZZ_BUILD) -j$(JOBS)
	scripts/fuzz $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(BENCH_BUILD) $(VERIFIER_BUILD)
