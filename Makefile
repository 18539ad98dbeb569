# The two commands of README.md, and the rest. Every target installs missing Debian packages
# first (scripts/install-deps), so a fresh Debian 12 machine needs nothing else.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
BENCH_BUILD ?= build-bench
VERIFIER_BUILD ?= build-verifier
INSTALL_BUILD ?= build-install
PACKAGE_BUILD ?= build-package
PREFIX     ?= /usr/local
TSAN_BUILD ?= build-tsan
# The tests that run threads, run in the ThreadSanitizer build: the log's group commit, the
# budgets, the signer process and its watchdog, the verifier's workers, and every test that runs
# decisiond (its workers, its checkpoint thread, the batch receipts' sealer and appender; the
# fault tests' client threads too), sworn-witness (its key's device calls run on the signer's
# watchdog thread), except
# test_decisiond_frames: its thousand peers take longer under TSan than the 30 s a frame may stay
# partial (real time), so its memory test would measure the deadline instead of the frame pool.
TSAN_TESTS ?= test_logstore|test_policy|test_signer_proc|test_vault|test_verify|test_decisiond|test_decisiond_oauth|test_decisiond_escalate|test_decisiond_sockets|test_decisiond_faults|test_decisiond_seccomp|test_decisiond_sandbox|test_decisiond_batch|test_verify_stack|test_witness|test_decisiond_witness|test_decisiond_witness_attacks
JOBS       ?= $(shell nproc)
FUZZ_SECONDS ?= 60

SOURCES = $(shell git ls-files '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' -not -path './build*')

CHECK_PARTS ?= format-check build-verifier test test-asan test-tsan build-bench fuzz-replay

.PHONY: all deps install build build-asan build-bench build-fuzz build-tsan build-verifier check test \
	test-asan test-tsan fuzz-replay format format-check demo bench fuzz clean package

all: build

deps:
	@scripts/install-deps

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j$(JOBS)
	scripts/npm-deps $(BUILD)

build-asan: deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSWORN_SANITIZE=ON >/dev/null
	cmake --build $(ASAN_BUILD) -j$(JOBS)
	scripts/npm-deps $(ASAN_BUILD)

build-tsan: deps
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSWORN_TSAN=ON >/dev/null
	cmake --build $(TSAN_BUILD) -j$(JOBS)
	scripts/npm-deps $(TSAN_BUILD)

# The auditor's verifier on its own (verifier/ links only OpenSSL and protobuf-c).
build-verifier: deps
	cmake -S verifier -B $(VERIFIER_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(VERIFIER_BUILD) -j$(JOBS)

# Install a Release build under $(PREFIX), into $(DESTDIR) when set (docs/cli.md, "Installing").
install: deps
	cmake -S . -B $(INSTALL_BUILD) -DCMAKE_BUILD_TYPE=Release -DSWORN_TESTS=OFF \
		-DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(INSTALL_BUILD) -j$(JOBS)
	DESTDIR=$(DESTDIR) cmake --install $(INSTALL_BUILD) --prefix $(PREFIX)

# The Debian packages of a Release build (cmake/package.cmake; docs/operations.md, "Install"):
# $(PACKAGE_BUILD)/sworn_VERSION_ARCH.deb (everything but the verifier) and
# $(PACKAGE_BUILD)/sworn-verify_VERSION_ARCH.deb (the verifier alone, for auditors).
package: deps
	cmake -S . -B $(PACKAGE_BUILD) -DCMAKE_BUILD_TYPE=Release -DSWORN_TESTS=OFF >/dev/null
	cmake --build $(PACKAGE_BUILD) -j$(JOBS)
	cd $(PACKAGE_BUILD) && cpack -G DEB
	@ls -1 $(PACKAGE_BUILD)/*.deb

test: build
	cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

test-asan: build-asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:fast_unwind_on_malloc=0 \
		LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j$(JOBS)

# A race report fails the test: in-process at once (halt_on_error), in a daemon through its log
# (sworn_stack_down). tests/tsan.supp holds suppressions for third-party code only.
test-tsan: build-tsan
	cd $(TSAN_BUILD) && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$(CURDIR)/tests/tsan.supp \
		ctest --output-on-failure -j$(JOBS) -R '^($(TSAN_TESTS))$$'

format-check: deps
	clang-format --dry-run --Werror $(SOURCES)

format: deps
	clang-format -i $(SOURCES)

# Every test, in the normal build and in the ASan + UBSan build, the threaded tests in the
# ThreadSanitizer build, the format check, the verifier
# built standalone, the Release build (the one make bench measures) and the clang fuzz build with
# every fuzz target run over its seed corpus and saved crashes. Each part is timed; the times are
# printed at the end (CI's budget for all of it is 90 minutes on 2 cores).
check: deps
	@set -e; total0=$$(date +%s); times=""; \
	for part in $(CHECK_PARTS); do \
		t0=$$(date +%s); \
		echo "== make check: $$part"; \
		$(MAKE) --no-print-directory $$part || { echo "== make check: $$part FAILED"; exit 1; }; \
		times="$$times$$(printf '  %-16s %5ss' $$part $$(( $$(date +%s) - t0 )))\n"; \
	done; \
	printf "== make check passed; time per part:\n$$times  %-16s %5ss\n" total $$(( $$(date +%s) - total0 ))

demo: build
	scripts/demo $(BUILD)

# The Release build (-O3, _FORTIFY_SOURCE) that the benchmark measures.
build-bench: deps
	cmake -S . -B $(BENCH_BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	cmake --build $(BENCH_BUILD) -j$(JOBS)

bench: build-bench
	scripts/bench $(BENCH_BUILD)

# The clang build with the libFuzzer targets (and ASan + UBSan everywhere).
build-fuzz: deps
	CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DSWORN_FUZZ=ON >/dev/null
	cmake --build $(FUZZ_BUILD) -j$(JOBS)

# Every libFuzzer target over its seed corpus and saved crashes, once each (no fuzzing).
fuzz-replay: build-fuzz
	scripts/fuzz --replay $(FUZZ_BUILD)

fuzz: build-fuzz
	scripts/fuzz $(FUZZ_BUILD) $(FUZZ_SECONDS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(BENCH_BUILD) $(VERIFIER_BUILD) $(TSAN_BUILD) \
		$(PACKAGE_BUILD)
