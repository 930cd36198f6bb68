# SPDX-License-Identifier: MIT
#
# vmgpu: one entry point for building, booting and testing.
#   make        build everything (QEMU device, vmgpu.ko, guest userspace, initramfs,
#               the debug kernel and its vmgpu.ko and initramfs)
#   make run    boot the guest and show vmgpu-info
#   make test   boot every device configuration and run the tests
#   make shell  boot the guest to an interactive shell
#   make check  static checks (checkpatch, sparse)
#   make bench  boot the guest and run vmgpu-bench (ratios, not pass/fail)
#   make mutants  break each correctness fix on purpose; its test must fail
#   make deb    Debian packages: vmgpu-dkms (the module's sources) and vmgpu-tools
#   make qemu-patches  the QEMU device as a patch series against QEMU 10.0
# Kbuild reads ./Kbuild, not this file, when it builds the module.

SHELL := /bin/bash
KVER = $(shell source scripts/common.sh && resolve_kernel_version)
KDIR ?= /lib/modules/$(KVER)/build
OUT := $(CURDIR)/out
EXTRA ?=
CONFIG ?= rebar
CONFIGS ?=

all: initramfs initramfs-debug

setup:
	@scripts/setup.sh

qemu: setup
	@scripts/build-qemu.sh

module: setup
	@$(MAKE) -s -C $(KDIR) M=$(CURDIR) W=1 modules

userspace: setup kernel-fetch
	@$(MAKE) -s -C userspace OUT=$(OUT)/userspace

kernel-fetch: setup
	@scripts/fetch-kernel.sh >/dev/null

# IGT GPU Tools' generic KMS tests (cached), copied into the image.
igt-build: setup
	@scripts/build-igt.sh

initramfs: qemu module userspace igt-build
	@scripts/build-initramfs.sh $(EXTRA)

# The debug kernel (cached) with vmgpu.ko built against it.
initramfs-debug: qemu userspace
	@scripts/build-debug.sh $(EXTRA)

run: initramfs
	@scripts/run-guest.sh --mode run --config $(CONFIG) --log $(OUT)/run.log; \
	sed -n '/^vmgpu-guest: kernel/,/^vmgpu-guest: done/p' $(OUT)/run.log | grep -v '^\[' | \
		sed '/^vmgpu-guest: png begin/,/^vmgpu-guest: png end/d; s/\x1b\[[0-9;]*[HJ]//g'; \
	sed -n '/^vmgpu-guest: png begin/,/^vmgpu-guest: png end/p' $(OUT)/run.log | \
		grep -v '^vmgpu-guest\|^\[' | tr -d '\r' | base64 -d > $(OUT)/vmgpu-top.png; \
	if [ -s $(OUT)/vmgpu-top.png ]; then \
		echo "vmgpu: vmgpu-top's picture of the segments: $(OUT)/vmgpu-top.png"; \
	else \
		echo "vmgpu: no picture from vmgpu-top (see $(OUT)/run.log)"; rm -f $(OUT)/vmgpu-top.png; false; \
	fi

shell: initramfs initramfs-debug
	@scripts/run-guest.sh --mode shell --config $(CONFIG)

test: all
	@scripts/test.sh $(CONFIGS)

# Every IGT subtest of the generic KMS tests on one configuration (make
# test runs the basic set on rebar and onesegment).
igt: initramfs
	@mkdir -p $(OUT)/logs; \
	VMGPU_IGT=all VMGPU_ONLY_TESTS=igt VMGPU_BOOT_TIMEOUT=5400 \
		scripts/run-guest.sh --mode test --config $(CONFIG) --log $(OUT)/logs/igt.log; \
	python3 scripts/report.py $(OUT)/logs/igt.log

bench: initramfs
	@host=$$(python3 scripts/bench-host.py memcpy) && \
	scripts/run-guest.sh --mode bench --config $(CONFIG) --log $(OUT)/bench.log && \
	python3 scripts/bench-host.py report $(OUT)/bench.log $$host && \
	echo "bench: CPU access with a 64 MiB BAR (norebar): linear pages through the host aperture" && \
	scripts/run-guest.sh --mode bench-cpu --config norebar --log $(OUT)/bench-norebar.log && \
	python3 scripts/bench-host.py report $(OUT)/bench-norebar.log $$host

# Break each correctness fix on purpose and check that its test fails.
mutants: all
	@scripts/mutants.sh

deb: setup
	@scripts/build-deb.sh

qemu-patches: qemu
	@scripts/qemu-patches.sh

check: setup kernel-fetch
	@scripts/check.sh $(KDIR)

clean:
	@$(MAKE) -s -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	rm -rf $(OUT)

.PHONY: all setup qemu module userspace kernel-fetch igt-build initramfs initramfs-debug run shell test igt \
	bench mutants deb qemu-patches check clean
