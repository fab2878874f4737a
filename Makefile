# tracebench: `make bench` (set-up, default suite on every tracer available here, report) and
# `make test`. Everything a fresh Debian machine needs is installed by scripts/setup.sh.
CARGO ?= cargo
BIN := target/release/tracebench
STAMP := $(shell date -u +%Y%m%dT%H%M%SZ)
OUT ?= results/$(STAMP)
# The eBPF backend (libbpf-rs) needs clang and libelf at build time: scripts/setup.sh installs
# them, and a plain `cargo build` leaves the feature off so it needs neither.
FEATURES ?= tracebench-tracers/ebpf

.PHONY: all setup build bench test precision bench-gate indep compare clean docs

all: build

setup:
	bash scripts/setup.sh

build:
	$(CARGO) build --release $(if $(FEATURES),--features "$(FEATURES)")

# The default suite: every tracer `tracebench list` marks available, survey configuration.
bench: setup build
	$(BIN) run --tracer all --out $(OUT)
	@if $(BIN) --help | grep -q '^  report'; then $(BIN) report $(OUT); fi

# Measurement tests pin to the same core and time things, so they run one at a time.
test: setup build
	python3 scripts/check-structure.py harness/src tracers/src
	$(CARGO) test --release --workspace $(if $(FEATURES),--features "$(FEATURES)") -- --test-threads=1 --nocapture

# The user guide (docs/, an mdBook) into target/book/, and actionlint on the example workflows.
# mdbook is installed from crates.io when missing; nothing here is on `make bench`'s path.
MDBOOK ?= $(or $(shell command -v mdbook 2>/dev/null),$(HOME)/.cargo/bin/mdbook)
docs:
	@[ -x "$(MDBOOK)" ] || $(CARGO) install mdbook --locked
	$(MDBOOK) build docs
	bash scripts/lint-workflows.sh

# Precision figures of the measurement core (docs/validation.md, "Precision").
precision: build
	bash scripts/bench-precision.sh

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

# Example and test plugins (issue: plug in your own tracer).
include tracers/examples/examples.mk

