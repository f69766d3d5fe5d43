# h5loom: `make demo` and `make test` work from a fresh clone on a fresh Debian machine.
# They install missing system packages, create .venv/, build with CMake and run.

BUILD   ?= build
VENV    ?= .venv
NP      ?= 4
PYTHON  := $(VENV)/bin/python
MPIRUN  := mpirun --oversubscribe --allow-run-as-root
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps venv python build demo test bench bench-peers conformance-table clean distclean

# Compiled objects cached outside the repository when ccache is installed
# (scripts/install-deps.sh installs it): a clean clone, a CI run or another
# build directory recompiles only what changed. The Python package's build
# (scikit-build-core reads CMAKE_ARGS) uses it too.
ifneq ($(shell command -v ccache 2>/dev/null),)
export CCACHE_DIR ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/h5loom/ccache
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := true
export CCACHE_MAXSIZE ?= 5G
CCACHE_CMAKE := -DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
export CMAKE_ARGS := $(strip $(CMAKE_ARGS) $(CCACHE_CMAKE))
endif
.PHONY: test-asan fuzz fuzz-ci sanitize-ci tsan-soak

all: build

# HDF5 1.14.5, built once per machine by scripts/build-hdf5.sh into this prefix
# (H5LOOM_HDF5_PREFIX overrides it; docs/building.md). Every build below, the
# Python package and h5py use it.
export H5LOOM_HDF5_PREFIX := $(shell bash scripts/build-hdf5.sh --prefix)
HDF5_STAMP := $(H5LOOM_HDF5_PREFIX)/.h5loom-hdf5-stamp
HDF5_CMAKE := -DH5LOOM_HDF5_PREFIX=$(H5LOOM_HDF5_PREFIX)

deps:
	@bash scripts/install-deps.sh
	@H5LOOM_HDF5_JOBS=$(JOBS) bash scripts/build-hdf5.sh

$(HDF5_STAMP): | deps
	@test -f $@

# The virtual environment for every Python tool the project uses.
$(VENV)/.installed: requirements-dev.txt | deps
	@test -x $(PYTHON) || python3 -m venv $(VENV) || (rm -rf $(VENV) && /usr/bin/python3 -m venv $(VENV))
	$(PYTHON) -m pip install -q --upgrade pip
	$(PYTHON) -m pip install -q -r requirements-dev.txt
	@touch $@

# h5py from source against that HDF5, with MPI: h5py, mpi4py and h5loom share one
# libhdf5 in one process. No build isolation (it would build mpi4py from source),
# no pip wheel cache (a wheel there may be linked to another HDF5): the wheel is
# built once per HDF5 prefix, Python and mpi4py version and kept in the prefix
# (PREFIX/wheels/py<X.Y>-mpi4py-<V>/, gone with the prefix), then installed from
# there into each .venv - a fresh clone or CI run takes seconds, not minutes.
$(VENV)/.h5py-installed: requirements-h5py.txt $(VENV)/.installed $(HDF5_STAMP)
	@dir=$(H5LOOM_HDF5_PREFIX)/wheels/$$($(PYTHON) -c 'import sys, mpi4py; \
	  print(f"py{sys.version_info[0]}.{sys.version_info[1]}-mpi4py-{mpi4py.__version__}")') && \
	if ! ls $$dir/h5py-*.whl > /dev/null 2>&1; then \
	  echo "h5py: building a wheel from source against $(H5LOOM_HDF5_PREFIX) (once per HDF5, Python and mpi4py; about 2 min)"; \
	  printf '[build_ext]\nparallel = $(JOBS)\n' > $(VENV)/h5py-build.cfg && \
	  rm -rf $$dir.tmp && DIST_EXTRA_CONFIG=$(abspath $(VENV))/h5py-build.cfg \
	  CC=mpicc HDF5_MPI=ON HDF5_DIR=$(H5LOOM_HDF5_PREFIX) $(PYTHON) -m pip wheel -q --no-cache-dir --no-binary=h5py \
	    --no-build-isolation --no-deps -w $$dir.tmp -r requirements-h5py.txt && \
	  rm -rf $$dir && mv $$dir.tmp $$dir || exit 1; \
	fi && \
	$(PYTHON) -m pip install -q --no-index --no-deps --force-reinstall $$(ls -t $$dir/h5py-*.whl | head -1) && \
	if ! $(PYTHON) -c "import h5py; v = h5py.version.hdf5_version; assert v == '1.14.5' and h5py.get_config().mpi, v; \
	    print('h5py', h5py.__version__, 'against HDF5', v, 'with MPI, from', '$$dir')"; then \
	  echo "h5py: the wheel in $$dir does not work here; removed it - run make again to rebuild it"; \
	  rm -rf $$dir; exit 1; \
	fi
	@touch $@

venv: $(VENV)/.installed $(VENV)/.h5py-installed

# The h5loom Python package (and its bundled h5loom command), rebuilt when a source changes.
PKG_SOURCES := CMakeLists.txt pyproject.toml $(shell find src include python tools cmake -type f 2>/dev/null)
$(VENV)/.h5loom-installed: $(VENV)/.installed $(HDF5_STAMP) $(PKG_SOURCES)
	$(PYTHON) -m pip install -q --no-build-isolation .
	@touch $@

python: $(VENV)/.h5loom-installed

build: deps venv python
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DH5LOOM_PYTHON=$(abspath $(PYTHON)) $(HDF5_CMAKE) \
	  $(CCACHE_CMAKE)
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(MPIRUN) -n $(NP) $(BUILD)/examples/h5loom_demo --dir $(BUILD)

test: build
	rm -rf $(BUILD)/conformance $(BUILD)/vol-api-table.md
	ctest --test-dir $(BUILD) --output-on-failure --timeout 900 -j $(JOBS); status=$$?; \
	  $(PYTHON) tools/conformance_table.py $(BUILD)/conformance; \
	  if [ -f $(BUILD)/vol-api-table.md ]; then echo "HDF5's serial API tests through the VOL connector:"; \
	    cat $(BUILD)/vol-api-table.md; fi; exit $$status
	$(MAKE) sanitize-ci

# The standard benchmark set (docs/benchmarks.md): iotest and every kernel on
# hdf5 and log at 2 and 4 ranks; CSVs, summaries and plots in $(BUILD)/bench.
BENCH_DIR     ?= $(BUILD)/bench
BENCH_ENGINES ?= --engine hdf5 --engine log
bench: build
	@mkdir -p $(BENCH_DIR)
	for np in 2 4; do \
	  d=$(BENCH_DIR)/np$$np; mkdir -p $$d; \
	  $(MPIRUN) -n $$np $(BUILD)/h5loom bench iotest --repeat 2 $(BENCH_ENGINES) --dir $$d || exit 1; \
	  for k in qmcpack vpic hacc amrex; do \
	    $(MPIRUN) -n $$np $(BUILD)/h5loom bench $$k $(BENCH_ENGINES) --dir $$d || exit 1; done; \
	  $(MPIRUN) -n $$np $(BUILD)/h5loom bench e3sm --map bench/e3sm/f_case_866x72_16p.dat $(BENCH_ENGINES) --dir $$d || exit 1; \
	  $(PYTHON) tools/bench_summary.py $$d/iotest.csv; \
	done
	$(PYTHON) tools/bench_plot.py $(BENCH_DIR)/np2/*.csv $(BENCH_DIR)/np4/*.csv -o $(BENCH_DIR)/plots

# h5loom beside raw POSIX, h5py and ADIOS2 from Python, unsynced and synced,
# best of 3 (docs/benchmarks.md); tables, CSVs and plots in $(BENCH_DIR)/peers.
bench-peers: build
	@mkdir -p $(BENCH_DIR)/peers
	H5LOOM_PYTHON=$(PYTHON) $(BUILD)/h5loom bench peers --repeat 3 --dir $(BENCH_DIR)/peers
	H5LOOM_PYTHON=$(PYTHON) $(BUILD)/h5loom bench peers --repeat 3 --sync --dir $(BENCH_DIR)/peers \
	  --csv $(BENCH_DIR)/peers/peers-sync.csv --plot $(BENCH_DIR)/peers/peers-sync.png

conformance-table:
	$(PYTHON) tools/conformance_table.py $(BUILD)/conformance

# ---- crash-state exploration of the log engine (tests/crash/README.md) ----
# Records multi-step writes at CRASH_RANKS ranks in five engine configurations
# (a new file, and appends to a clean and to a crashed one), builds up to
# CRASH_IMAGES power-loss images of each run (about 36 000 in all), opens and
# checks every one, and prints the counts (wrong and lost must be 0).
# CRASH_ARGS: more options of tests/crash/run_crash.py (--steps 5,
# --strict-dirs, --keep DIR, ...).
CRASH_IMAGES ?= 1000
CRASH_SEED   ?= 1
CRASH_RANKS  ?= 1 2 4
CRASH_ARGS   ?=
.PHONY: crash-explore
crash-explore: build
	$(PYTHON) tests/crash/run_crash.py --build $(BUILD) --ranks $(CRASH_RANKS) --images $(CRASH_IMAGES) \
	  --seed $(CRASH_SEED) --cli-every 250 $(CRASH_ARGS)

# ---- sanitizers and fuzzing (docs/testing.md) ----
# test-asan: the unit, conformance and C API tests, and the replay of the fuzz
# inputs, built with ASan+UBSan (GCC) in $(ASAN_BUILD); no Python (the
# interpreter is not instrumented). Leaks: Open MPI never frees what MPI_Init
# allocates, and its plugins are unloaded before LeakSanitizer runs, so those
# reports have no stack a suppressions file could match. Leak detection is on
# for the tests that start no MPI (unit) and off for those that do.
ASAN_BUILD ?= build-asan
ASAN_TESTS ?= ^(unit-mpi|conformance-.*|capi-.*|pio-.*|netcdf-.*|async-soak-.*|soak-dir|fuzz-seeds|fuzz-replay)$$
ASAN_ENV = ASAN_OPTIONS=abort_on_error=1:detect_leaks=0:check_initialization_order=1:strict_init_order=1 \
           UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
test-asan: deps
	cmake -S . -B $(ASAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DH5LOOM_SANITIZE=address,undefined \
	  -DH5LOOM_BUILD_FORTRAN=OFF $(HDF5_CMAKE) $(CCACHE_CMAKE)
	cmake --build $(ASAN_BUILD) -j $(JOBS) --target sanitizer_tests
	rm -rf $(ASAN_BUILD)/conformance
	$(ASAN_ENV) ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 ctest --test-dir $(ASAN_BUILD) --output-on-failure -R '^unit$$'
	$(ASAN_ENV) ctest --test-dir $(ASAN_BUILD) --output-on-failure --timeout 900 -j $(JOBS) -R '$(ASAN_TESTS)'

# fuzz: the libFuzzer target over the log engine's reader, FUZZ_SECONDS long,
# from a seed corpus of real files (Clang, ASan+UBSan, in $(FUZZ_BUILD)).
# fuzz-ci (run by `make test`): the same build's ctest fuzz-seeds, fuzz-replay
# and fuzz-pass (a 60-second run, H5LOOM_FUZZ_CI_SECONDS).
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 600
FUZZ_ARGS    ?=
FUZZ_CMAKE = CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
             -DH5LOOM_SANITIZE=address,undefined -DH5LOOM_FUZZ=ON -DH5LOOM_BUILD_FORTRAN=OFF $(HDF5_CMAKE) \
             $(CCACHE_CMAKE)
fuzz: deps
	$(FUZZ_CMAKE)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target log_reader_fuzzer make_log_seeds
	ASAN_OPTIONS=detect_leaks=0 $(FUZZ_BUILD)/tests/fuzz/make_log_seeds $(FUZZ_BUILD)/corpus $(FUZZ_BUILD)/seed-files
	bash tests/fuzz/run_fuzzer.sh $(FUZZ_BUILD)/tests/fuzz/log_reader_fuzzer $(FUZZ_SECONDS) $(FUZZ_BUILD)/fuzz \
	  $(FUZZ_BUILD)/corpus tests/fuzz/regressions $(FUZZ_ARGS)

fuzz-ci: deps
	$(FUZZ_CMAKE)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target log_reader_fuzzer make_log_seeds log_reader_replay
	$(ASAN_ENV) ctest --test-dir $(FUZZ_BUILD) --output-on-failure -R '^fuzz-'

# sanitize-ci (run by `make test`): the suites of test-asan and of fuzz-ci in
# one build. The Clang fuzz build is ASan+UBSan as well, so running the
# sanitizer tests there spares CI a whole second instrumented build of the
# library (GCC's); `make test-asan` keeps the GCC build for developers.
sanitize-ci: deps
	$(FUZZ_CMAKE)
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target sanitizer_tests log_reader_fuzzer
	rm -rf $(FUZZ_BUILD)/conformance
	$(ASAN_ENV) ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 ctest --test-dir $(FUZZ_BUILD) --output-on-failure -R '^unit$$'
	$(ASAN_ENV) ctest --test-dir $(FUZZ_BUILD) --output-on-failure --timeout 900 -j $(JOBS) -R '$(ASAN_TESTS)|^fuzz-pass$$'

# tsan-soak: the async wrapper's randomised soak test (tests/tools/async_soak.cpp)
# under ThreadSanitizer (GCC), TSAN_ITERATIONS iterations at 1, 2 and 4 ranks,
# each under a timeout; a race report or a hang fails it (docs/async.md). Not
# part of `make test`: a third instrumented build would not fit CI's time; the
# same soak runs there uninstrumented (ctest async-soak-np*).
TSAN_BUILD      ?= build-tsan
TSAN_ITERATIONS ?= 300
tsan-soak: deps
	cmake -S . -B $(TSAN_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DH5LOOM_SANITIZE=thread \
	  $(HDF5_CMAKE)
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target async_soak
	@mkdir -p $(TSAN_BUILD)/soak-files
	for np in 1 2 4; do \
	  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(abspath tests/tools/tsan.supp)" \
	    timeout 1200 $(MPIRUN) -n $$np $(TSAN_BUILD)/tests/async_soak $(TSAN_ITERATIONS) $$np $(TSAN_BUILD)/soak-files \
	    || exit 1; \
	done

clean:
	rm -rf $(BUILD)

distclean: clean
	rm -rf $(VENV)
