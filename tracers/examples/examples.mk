# Example tracer plugins (tracers/include/tracebench.h). Included by the top Makefile; also
# usable alone from the repository root:  make -f tracers/examples/examples.mk plugins
#
#   target/plugins/liblw_plugin.so     the built-in `lw` as a plugin (plugin-path cost, README)
#   target/plugins/libnone_plugin.so   the built-in `none` (empty call) as a plugin (same)
#   target/plugins/libring_plugin.so   a small per-thread ring-buffer tracer in C
#   target/plugins/libtwopath_plugin.so two periodic slow paths (report tests, survey section 7.1)
#   target/plugins/libstores_plugin.so  stores into 16 cache lines per call (the footprint check)
#   target/plugins/libbimodal_plugin.so fast in every other measuring process (the gate's two-cluster test)
#   target/plugins/libnops_plugin.so   functions of known instruction counts (x86-64; the per-function profile
#                                      tests), and libnops1_plugin.so: one store more in one function
#   target/plugins/librust_plugin.so   a per-CPU rdtsc ring in Rust (cdylib, standalone crate)
#   target/plugins/broken-*.so         deliberately broken plugins for the tests
#
# `make plugin-bench` compares `lw` and `none` with their plugin builds (scripts/plugin-bench.sh).

PLUGIN_DIR      ?= target/plugins
PLUGIN_SRC      := tracers/examples
PLUGIN_CC       ?= cc
# -O2 like a user's release build; -fno-plt so that the plugin's own libc calls (clock_gettime)
# go through the GOT directly, like the Rust backends linked with -z now.
PLUGIN_CFLAGS   ?= -O2 -g -fPIC -fno-plt -Wall -Wextra -Werror -std=gnu11
PLUGIN_LDFLAGS  ?= -shared -Wl,-z,now
BROKEN_KINDS    := segv abort hang abi nosym init

PLUGINS := $(PLUGIN_DIR)/liblw_plugin.so $(PLUGIN_DIR)/libnone_plugin.so $(PLUGIN_DIR)/libring_plugin.so $(PLUGIN_DIR)/libtwopath_plugin.so $(PLUGIN_DIR)/libstores_plugin.so $(PLUGIN_DIR)/libbimodal_plugin.so $(PLUGIN_DIR)/librust_plugin.so \
           $(if $(filter x86_64,$(shell uname -m)),$(PLUGIN_DIR)/libnops_plugin.so $(PLUGIN_DIR)/libnops1_plugin.so) \
           $(BROKEN_KINDS:%=$(PLUGIN_DIR)/broken-%.so)

.PHONY: plugins plugins-clean plugin-bench
plugins: $(PLUGINS)

$(PLUGIN_DIR):
	mkdir -p $@

$(PLUGIN_DIR)/lib%_plugin.so: $(PLUGIN_SRC)/%_plugin.c tracers/include/tracebench.h | $(PLUGIN_DIR)
	$(PLUGIN_CC) $(PLUGIN_CFLAGS) -I tracers/include $(PLUGIN_LDFLAGS) -o $@.tmp $< && mv $@.tmp $@

# The nops plugin with one store more in nutrace_write (the gate's test pair).
$(PLUGIN_DIR)/libnops1_plugin.so: $(PLUGIN_SRC)/nops_plugin.c tracers/include/tracebench.h | $(PLUGIN_DIR)
	$(PLUGIN_CC) $(PLUGIN_CFLAGS) -DNOPS_EXTRA_STORE -I tracers/include $(PLUGIN_LDFLAGS) -o $@.tmp $< && mv $@.tmp $@

# One object per failure kind: -DBROKEN_SEGV, -DBROKEN_ABORT, ...
$(PLUGIN_DIR)/broken-%.so: $(PLUGIN_SRC)/broken.c tracers/include/tracebench.h | $(PLUGIN_DIR)
	$(PLUGIN_CC) $(PLUGIN_CFLAGS) -DBROKEN_$(shell echo $* | tr a-z A-Z) -I tracers/include $(PLUGIN_LDFLAGS) \
	  -o $@.tmp $< && mv $@.tmp $@

# Its own target dir: the crate is standalone (own [workspace]) and must not share the
# harness's lock file or profile.
$(PLUGIN_DIR)/librust_plugin.so: $(wildcard $(PLUGIN_SRC)/rust-plugin/src/*.rs) $(PLUGIN_SRC)/rust-plugin/Cargo.toml | $(PLUGIN_DIR)
	cargo build --quiet --release --manifest-path $(PLUGIN_SRC)/rust-plugin/Cargo.toml --target-dir $(PLUGIN_DIR)/rust-build
	cp $(PLUGIN_DIR)/rust-build/release/librust_plugin.so $@.tmp && mv $@.tmp $@

plugins-clean:
	rm -rf $(PLUGIN_DIR)

plugin-bench: plugins
	scripts/plugin-bench.sh
