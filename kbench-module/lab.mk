# Make targets of the kernel side; the top-level Makefile includes this file:
#     include kbench-module/lab.mk
# kernel-lab: boot each kernel of KERNELS (default bookworm,trixie: Debian's 6.1 and 6.12) under qemu TCG, run
# kbench-module with every kernel tracer, the ioctl fuzz and the robustness tests, and check the results
# (scripts/kernel-lab/test.sh; exits non-zero when a check fails). Downloads are cached in .cache/.
# kbench-module: build kbench.ko for the running kernel (bare metal; needs its headers).
.PHONY: kernel-lab kbench-module kbench-module-clean
kernel-lab:
	KERNELS="$(KERNELS)" bash scripts/kernel-lab/test.sh
kbench-module:
	$(MAKE) -C kbench-module
kbench-module-clean:
	$(MAKE) -C kbench-module clean
