# h5loom: `make demo` and `make test` work from a fresh clone on a fresh Debian machine.
# They install missing system packages, create .venv/, build with CMake and run.

BUILD   ?= build
VENV    ?= .venv
NP      ?= 4
PYTHON  := $(VENV)/bin/python
MPIRUN  := mpirun --oversubscribe --allow-run-as-root
JOBS    ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps venv python build demo test bench conformance-table clean distclean

all: build

deps:
	@bash scripts/install-deps.sh

# The virtual environment for every Python tool the project uses.
$(VENV)/.installed: requirements-dev.txt | deps
	@test -x $(PYTHON) || python3 -m venv $(VENV) || (rm -rf $(VENV) && /usr/bin/python3 -m venv $(VENV))
	$(PYTHON) -m pip install -q --upgrade pip
	$(PYTHON) -m pip install -q -r requirements-dev.txt
	@touch $@

venv: $(VENV)/.installed

# The h5loom Python package (and its bundled h5loom command), rebuilt when a source changes.
PKG_SOURCES := CMakeLists.txt pyproject.toml $(shell find src include python tools cmake -type f 2>/dev/null)
$(VENV)/.h5loom-installed: $(VENV)/.installed $(PKG_SOURCES)
	$(PYTHON) -m pip install -q --no-build-isolation .
	@touch $@

python: $(VENV)/.h5loom-installed

build: deps venv python
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DH5LOOM_PYTHON=$(abspath $(PYTHON))
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	$(MPIRUN) -n $(NP) $(BUILD)/examples/h5loom_demo --dir $(BUILD)

test: build
	rm -rf $(BUILD)/conformance
	ctest --test-dir $(BUILD) --output-on-failure --timeout 900; status=$$?; \
	  $(PYTHON) tools/conformance_table.py $(BUILD)/conformance; exit $$status

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

clean:
	rm -rf $(BUILD)

distclean: clean
	rm -rf $(VENV)
