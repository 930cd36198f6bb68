#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Fetch QEMU 10.0.x source from Debian (patches applied), apply ours
# (scripts/qemu-patches), drop the vmgpu device in and build a minimal
# qemu-system-x86_64. Everything lives in
# $VMGPU_CACHE keyed by the QEMU version and the build inputs, so a warm
# rebuild after editing a device file only recompiles that file.
set -euo pipefail

. "$(dirname "$0")/common.sh"

resolve_qemu_version() {
	apt-cache showsrc qemu 2>/dev/null | sed -n 's/^Version: \(.*:\)\?\(10\.0\.[^ ]*\)$/\2/p' |
		sort -V | tail -n 1
}

ver=$(resolve_qemu_version)
[ -n "$ver" ] || die "no QEMU 10.0.x source known to apt (run scripts/setup.sh)"
top="$VMGPU_CACHE/qemu-$ver"
src="$top/src"

# Fixes to QEMU itself (scripts/qemu-patches), applied once to a fresh
# source tree, exactly (no fuzz): a different set fetches the source again
# and builds in another directory (a refetch restores old mtimes, which
# ninja would not rebuild).
shopt -s nullglob
patches=("$VMGPU_ROOT"/scripts/qemu-patches/*.patch)
shopt -u nullglob
patch_key=$(cat /dev/null "${patches[@]}" | sha256sum | cut -c1-12)
[ "$(cat "$src/.vmgpu-patches" 2>/dev/null)" = "$patch_key" ] || rm -f "$src/.vmgpu-fetched"

if [ ! -f "$src/.vmgpu-fetched" ]; then
	log "fetching QEMU $ver source"
	fetch_qemu_source "$ver" "$src"
	for p in "${patches[@]}"; do
		patch -s --batch --forward -F0 -p1 -d "$src" <"$p" ||
			die "QEMU patch $(basename "$p") does not apply"
	done
	echo "$patch_key" >"$src/.vmgpu-patches"
	qemu_build_vmgpu "$src"
	touch "$src/.vmgpu-fetched"
fi

# Copy the device in, touching only files that changed so ninja stays incremental.
mkdir -p "$src/hw/vmgpu" "$src/include/hw/vmgpu"
sync_file() {
	cmp -s "$1" "$2" || cp "$1" "$2"
}
for f in "$VMGPU_ROOT"/qemu-device/*; do
	case "$f" in
	*.mak) ;;
	*) sync_file "$f" "$src/hw/vmgpu/$(basename "$f")" ;;
	esac
done
sync_file "$VMGPU_ROOT/include/hw/vmgpu_hw.h" "$src/include/hw/vmgpu/vmgpu_hw.h"
for f in "$src"/hw/vmgpu/*; do
	[ -e "$VMGPU_ROOT/qemu-device/$(basename "$f")" ] || rm -f "$f"
done

devices="$VMGPU_ROOT/qemu-device/devices-x86_64.mak"
config_args=("${QEMU_CONFIG_ARGS[@]}")
key=$( (echo "${config_args[*]}" "$patch_key"; cat "$devices") | sha256sum | cut -c1-12)
build="$top/build-$key"

mkdir -p "$src/configs/devices/x86_64-softmmu"
sync_file "$devices" "$src/configs/devices/x86_64-softmmu/vmgpu-devices.mak"

if [ ! -f "$build/build.ninja" ]; then
	log "configuring QEMU $ver in $build"
	rm -rf "$build"
	mkdir -p "$build"
	(cd "$build" && "$src/configure" "${config_args[@]}" >configure.log 2>&1) ||
		{ tail -n 30 "$build/configure.log"; die "QEMU configure failed"; }
fi

log "building qemu-system-x86_64 ($ver)"
ninja -C "$build" qemu-system-x86_64 >"$build/ninja.log" 2>&1 ||
	{ grep -B2 -A12 -m3 'error' "$build/ninja.log" || tail -n 40 "$build/ninja.log"; die "QEMU build failed"; }

mkdir -p "$VMGPU_OUT"
ln -sf "$build/qemu-system-x86_64" "$VMGPU_OUT/qemu-system-x86_64"
echo "$ver" >"$VMGPU_OUT/qemu-version"
