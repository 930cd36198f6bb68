#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Everything the debug-kernel configurations boot: the debug kernel
# (cached), vmgpu.ko built against it (in out/module-debug, apart from the
# module built for Debian's kernel), tests/checkers/ (bugs the kernel's
# checkers must catch), tests/exporter/ (a dma-buf exporter that moves its
# buffers, for the PRIME tests), and their initramfs in out/debug/.
# usage: build-debug.sh [EXTRA_DIR]
set -euo pipefail

. "$(dirname "$0")/common.sh"

kdir=$("$VMGPU_ROOT/scripts/build-debug-kernel.sh")
tree="$VMGPU_OUT/module-debug"

# A copy of the module's sources; rsync keeps timestamps, so only what
# changed is rebuilt. The deliberately broken checker module goes along.
mkdir -p "$tree"
rsync -a --delete --include='*/' --include='*.[ch]' --include='Makefile' \
	--include='Kbuild' --exclude='*' \
	"$VMGPU_ROOT/Kbuild" "$VMGPU_ROOT/drivers" "$VMGPU_ROOT/include" "$tree/"
rsync -a --delete "$VMGPU_ROOT/tests/checkers/" "$tree/checkers/"
rsync -a --delete "$VMGPU_ROOT/tests/exporter/" "$tree/exporter/"
make -s -C "$kdir" M="$tree" W=1 modules
make -s -C "$kdir" M="$tree/checkers" modules
make -s -C "$kdir" M="$tree/exporter" modules
"$VMGPU_ROOT/scripts/build-initramfs.sh" --debug "$kdir" "$@"
