#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Build the debug guest kernel from linux-source-6.12 (the same version as
# the Debian guest kernel): allnoconfig plus scripts/debug-kernel/
# vmgpu-debug.config, so only what the guest needs, with lockdep, KASAN,
# kmemleak, DMA-API debugging, debug objects, fault injection and KUnit.
# Cached in $VMGPU_CACHE keyed by the source version and a hash of the
# configuration inputs; a warm cache does not rebuild. Prints the build
# directory (bzImage, and the tree to build vmgpu.ko against).
set -euo pipefail

. "$(dirname "$0")/common.sh"

inputs="$VMGPU_ROOT/scripts/debug-kernel"
fragment="$inputs/vmgpu-debug.config"
src=$(fetch_linux_source)
ver=$(resolve_source_version)
key=$(cat "$fragment" "$inputs/Kconfig" | sha256sum | cut -c1-12)
build="$VMGPU_CACHE/debug-kernel-$ver-$key"

if [ -f "$build/.vmgpu-built" ]; then
	echo "$build"
	exit 0
fi

# TTM and friends are selected by this symbol (see the Kconfig's header).
mkdir -p "$src/drivers/gpu/drm/vmgpu-deps"
cmp -s "$inputs/Kconfig" "$src/drivers/gpu/drm/vmgpu-deps/Kconfig" ||
	cp "$inputs/Kconfig" "$src/drivers/gpu/drm/vmgpu-deps/Kconfig"
grep -q 'vmgpu-deps/Kconfig' "$src/drivers/gpu/drm/Kconfig" ||
	echo 'source "drivers/gpu/drm/vmgpu-deps/Kconfig"' >>"$src/drivers/gpu/drm/Kconfig"

log "configuring the debug kernel ($ver) in $build"
rm -rf "$build"
mkdir -p "$build"
make -s -C "$src" O="$build" KCONFIG_ALLCONFIG="$fragment" allnoconfig >/dev/null

# Kconfig silently drops what it cannot satisfy: every line must hold.
missing=$(grep -E '^CONFIG_' "$fragment" | while IFS='=' read -r sym want; do
	got=$(sed -n "s/^$sym=//p" "$build/.config")
	if [ "$want" = n ]; then
		[ -z "$got" ] || echo "$sym=$want (got $got)"
	elif [ "$got" != "$want" ]; then
		echo "$sym=$want (got ${got:-unset})"
	fi
done)
[ -z "$missing" ] || die "debug kernel configuration lost: $missing"

log "building the debug kernel ($(nproc) jobs; about 5 minutes on 2 cores)"
make -s -C "$src" O="$build" -j"$(nproc)" bzImage modules >"$build/build.log" 2>&1 ||
	{ tail -n 40 "$build/build.log"; die "debug kernel build failed"; }
touch "$build/.vmgpu-built"
echo "$build"
