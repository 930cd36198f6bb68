#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Static checks: checkpatch on the kernel sources and headers, sparse on
# the module (make C=2 rebuilds every file through sparse).
# usage: check.sh KDIR
set -euo pipefail

. "$(dirname "$0")/common.sh"

kdir=$1
checkpatch="$VMGPU_CACHE/linux-source/scripts/checkpatch.pl"
[ -f "$checkpatch" ] || die "checkpatch.pl missing (run scripts/fetch-kernel.sh)"

cd "$VMGPU_ROOT"
status=0
log "checkpatch"
# shellcheck disable=SC2046
perl "$checkpatch" --no-tree --terse --show-types --strict -f \
	$(git ls-files 'drivers/*.[ch]' 'include/uapi/*.h') || status=1
# The hardware contract is also compiled by QEMU: C99 types, C11 asserts,
# no BIT().
perl "$checkpatch" --no-tree --terse --show-types --strict \
	--ignore PREFER_KERNEL_TYPES,CAMELCASE,BIT_MACRO -f include/hw/vmgpu_hw.h || status=1

log "sparse"
out=$(make -s -C "$kdir" M="$VMGPU_ROOT" C=2 CHECK="sparse -Wno-decl" modules 2>&1 |
	grep -E 'warning|error' || true)
if [ -n "$out" ]; then
	echo "$out"
	status=1
fi
[ $status = 0 ] && log "static checks clean"
exit $status
