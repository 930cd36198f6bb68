#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Everything the debug-kernel configurations boot: the debug kernel
# (cached), vmgpu.ko built against it (in out/module-debug, apart from the
# module built for Debian's kernel), and their initramfs in out/debug/.
# usage: build-debug.sh [EXTRA_DIR]
set -euo pipefail

. "$(dirname "$0")/common.sh"

kdir=$("$VMGPU_ROOT/scripts/build-debug-kernel.sh")
tree="$VMGPU_OUT/module-debug"

# A copy of the module's sources; rsync keeps timestamps, so only what
# changed is rebuilt.
mkdir -p "$tree"
rsync -a --delete --include='*/' --include='*.[ch]' --include='Makefile' \
	--include='Kbuild' --exclude='*' \
	"$VMGPU_ROOT/Kbuild" "$VMGPU_ROOT/drivers" "$VMGPU_ROOT/include" "$tree/"
make -s -C "$kdir" M="$tree" W=1 modules
"$VMGPU_ROOT/scripts/build-initramfs.sh" --debug "$kdir" "$@"
