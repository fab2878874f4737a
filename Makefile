# tracebench: `make bench` (set-up, default suite on every tracer available here, report) and
# `make test`. Everything a fresh Debian machine needs is installed by scripts/setup.sh.
CARGO ?= cargo
BIN := target/release/tracebench
STAMP := $(shell date -u +%Y%m%dT%H%M%SZ)
OUT ?= results/$(STAMP)
# The eBPF backend (libbpf-rs) needs clang and libelf at build time: scripts/setup.sh installs
# them, and a plain `cargo build` leaves the feature off so it needs neither.
FEATURES ?= tracebench-tracers/ebpf

.PHONY: all setup build bench test ci-replay precision bench-gate indep compare clean mutants calibrate calibrate-real docs docs-examples sentinel-cost footprint bench-overhead survey bench-scale

all: build

setup:
	bash scripts/setup.sh

build:
	$(CARGO) build --release $(if $(FEATURES),--features "$(FEATURES)")

# The default suite: every tracer `tracebench list` marks available, survey configuration, with
# interleaved rounds added until every pair of tracers is decided or BUDGET is spent.
BUDGET ?= 240s
bench: setup build
	$(BIN) run --tracer all --budget $(BUDGET) --out $(OUT)
	@if $(BIN) --help | grep -q '^  report'; then $(BIN) report $(OUT); fi

# The survey's tables and figures this machine can make, in SURVEY_BUDGET (docs/survey.md); what it
# cannot make is listed with the reason and the fix in $(OUT)/not-made.txt.
SURVEY_BUDGET ?= 10m
survey: build
	$(BIN) survey --budget $(SURVEY_BUDGET) --out $(OUT)

# Measurement tests pin to the same core and time things, so they run one at a time.
# scripts/untested-messages.py lists the user-facing messages no test names, and fails when
# there are more than scripts/untested-messages.count (the list only shrinks).
test: setup build
	python3 scripts/tests/check_structure_test.py
	python3 scripts/tests/ci_replay_test.py
	python3 scripts/tests/docs_examples_test.py
	python3 scripts/tests/arm64_compare_test.py
	python3 scripts/check-structure.py harness/src tracers/src
	python3 scripts/untested-messages.py
	python3 scripts/check-docs.py $(BIN)
	python3 scripts/tests/check_user_docs_test.py
	python3 scripts/check-user-docs.py
	$(CARGO) test --release --workspace $(if $(FEATURES),--features "$(FEATURES)") -- --test-threads=1 --nocapture

# The workflow replay (docs/testing.md): each job of scripts/ci-example/*.yml run step by step as
# an unprivileged runner user with passwordless sudo, the `uses:` actions stood in locally, a small
# tracer repository as the pull request (scripts/ci-replay/). Root only: it creates (and removes)
# that user and its sudoers entry, and installs sudo when missing, which `make test` must not do on
# a developer's machine; .ci/run runs it. About 20 s. PyYAML comes from PyPI into
# target/ci-replay-tools where python3 has none (or from apt, where python3 has no pip).
# CI_REPLAY_ARGS: e.g. --only instructions.
ci-replay: build
	@python3 -c 'import yaml' 2>/dev/null || python3 -m pip install --quiet --target target/ci-replay-tools pyyaml \
	  || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-yaml
	PYTHONPATH=target/ci-replay-tools python3 scripts/ci-replay/replay.py $(CI_REPLAY_ARGS)

# Mutation testing of the pure modules (docs/testing.md): how many of cargo-mutants' changes to
# the statistics (harness/src/stats/) and the gate's verdict the unit tests catch. Not in
# `make test`: all mutants (745 when last counted) take about 2.5 h on a busy 2-core machine. MUTANTS_ARGS passes
# cargo-mutants options, e.g. MUTANTS_ARGS="--shard 0/8 --sharding round-robin" (an eighth).
mutants:
	bash scripts/mutants.sh $(MUTANTS_ARGS)

# Calibration of the code-path analysis (docs/code-paths.md): seeded null and planted runs of the
# listed kinds (false discoveries and power), then the generative battery: random compositions
# of cost components, as many of COMPOSITIONS as fit in BUDGET_S seconds, every claim scored
# against what was planted (the table says how many ran).
calibrate: build
	$(BIN) __calibrate --runs $(or $(RUNS),56)
	$(BIN) __calibrate --generative $(or $(COMPOSITIONS),10000) --budget-s $(or $(BUDGET_S),100)

# The generative battery's compositions planted into real runs of the spin tracer on this machine
# (docs/code-paths.md): its own noise instead of the grammar's; REAL_S seconds, one run at a time.
calibrate-real: build
	$(BIN) __calibrate --generative $(or $(COMPOSITIONS),10000) --real --max-calls $(or $(MAX_CALLS),100000) --budget-s $(or $(REAL_S),120)

# The user guide (docs/, an mdBook) into target/book/, and actionlint on the example workflows.
# mdbook is installed from crates.io when missing; nothing here is on `make bench`'s path.
MDBOOK ?= $(or $(shell command -v mdbook 2>/dev/null),$(HOME)/.cargo/bin/mdbook)
docs:
	@[ -x "$(MDBOOK)" ] || $(CARGO) install mdbook --locked
	$(MDBOOK) build docs
	bash scripts/lint-workflows.sh

# The console examples of README.md and docs/ refreshed from real runs, one directory per page
# (harness/tests/doc_examples.rs checks them in make test); review and commit the diff.
docs-examples: build
	BIN=$(BIN) bash scripts/docs-examples.sh

# Precision figures of the measurement core (docs/validation.md, "Precision").
precision: build
	bash scripts/bench-precision.sh

# Do sentinel windows, and reference windows, move a tracer's cost? Interleaved runs with and
# without each (docs/method.md).
sentinel-cost: build
	BIN=$(BIN) bash scripts/sentinel-cost.sh
	BIN=$(BIN) FLAG=--reference-every bash scripts/sentinel-cost.sh

# Does the harness move what it measures? Slow calls on the harness's own cycles, and the tail of
# one long run against the same calls split into repetitions, interleaved (docs/method.md).
footprint: build plugins
	BIN=$(BIN) bash scripts/footprint.sh

# Run and report at 1M and 10M calls (NS="1000000 10000000 100000000" for the full check):
# wall time, peak RSS, disk and the planted path's share at each length.
bench-scale: build
	BIN=$(BIN) bash scripts/bench-scale.sh

# The fixed cost of a measuring process: wall time of `run -n 5000` for none, lw,
# printf and lttng-ust against a --repeats run, the seconds per phase, the gate's pairs per second.
bench-overhead: build
	BIN=$(BIN) bash scripts/bench-overhead.sh

# Validation figures of the regression gate (docs/ci-gate.md): false alarms and power.
bench-gate: build
	TRACEBENCH=$(BIN) bash scripts/bench-gate.sh

# Independent check of the LTTng, ftrace and system-call backends:
# tb-indep times the same calls outside tracebench; compare runs both, interleaved.
indep:
	$(MAKE) -C scripts/indep

compare: build indep
	bash scripts/indep/compare.sh -b $(BIN)

clean:
	$(CARGO) clean
	$(MAKE) -C scripts/indep clean

# Kernel side: kbench-module and the kernel lab (qemu TCG guest).
include kbench-module/lab.mk

# arm64: tracebench cross-built, run under qemu-system-aarch64 TCG with its emulated PMU; the PMU's and the
# single-stepper's instruction counts must agree (scripts/arm64-lab/lab.sh, docs/arm64.md). Downloads in .cache/.
.PHONY: arm64-lab
arm64-lab:
	bash scripts/arm64-lab/lab.sh $(ARM64_LAB_ARGS)

# Example and test plugins (plug in your own tracer: docs/plugins.md).
include tracers/examples/examples.mk

