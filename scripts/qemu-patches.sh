#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make qemu-patches: the vmgpu device as the patch series git format-patch
# gives against QEMU 10.0's tree, in out/qemu-patches/, for building it
# into one's own QEMU (git am, or patch -p1). First any fixes to QEMU
# itself (scripts/qemu-patches), then the device (hw/vmgpu and the
# hardware contract's header), then the lines that build it. The base is
# Debian's source of the QEMU scripts/build-qemu.sh builds (trixie's
# 10.0.x, Debian's own patches applied), fetched untouched once; the
# series is checked to apply to it.
set -euo pipefail

. "$(dirname "$0")/common.sh"

src=$(ls -d "$VMGPU_CACHE"/qemu-10.0.*/src 2>/dev/null | sort -V | tail -n 1)
[ -f "$src/.vmgpu-fetched" ] || die "no QEMU source yet: make qemu first"
top=$(dirname "$src")
ver=$(basename "$top")
ver=${ver#qemu-}
# The base: Debian's source of the same QEMU, untouched (fetched once).
pristine="$top/pristine"
if [ ! -f "$pristine/.vmgpu-fetched" ]; then
	log "fetching QEMU $ver source, untouched, for the patch series"
	fetch_qemu_source "$ver" "$pristine"
	touch "$pristine/.vmgpu-fetched"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out="$VMGPU_OUT/qemu-patches"
rm -rf "$out"
mkdir -p "$out"
export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1

# The files the series touches, as QEMU has them.
shopt -s nullglob
fixes=("$VMGPU_ROOT"/scripts/qemu-patches/*.patch)
shopt -u nullglob
base_files=(meson.build hw/meson.build hw/Kconfig $(cat /dev/null "${fixes[@]}" |
	sed -n 's|^+++ b/\([^\t]*\).*|\1|p' | sort -u))
git init -q "$work/qemu"
for f in "${base_files[@]}"; do
	mkdir -p "$work/qemu/$(dirname "$f")"
	cp "$pristine/$f" "$work/qemu/$f"
done
git -C "$work/qemu" add -A
git -C "$work/qemu" -c user.name=QEMU -c user.email=qemu@localhost \
	commit -q -m "QEMU $ver (the files the series touches)"

# A fix's own description (the text before its diff), or its name.
fix_message() {
	local name
	name=$(basename "$1" .patch | sed 's/^[0-9]*-//; s/-/ /g')
	sed -n '/^diff \|^--- a\//q; p' "$1" | grep -q . && sed -n '/^diff \|^--- a\//q; p' "$1" ||
		printf '%s\n\nFrom scripts/qemu-patches/%s.\n' "$name" "$(basename "$1")"
}

commit() {
	git -C "$work/qemu" add -A
	git -C "$work/qemu" -c user.name="The vmgpu authors" -c user.email=vmgpu@localhost \
		commit -q -F -
}

for p in "${fixes[@]}"; do
	patch -s -p1 -d "$work/qemu" <"$p"
	fix_message "$p" | commit
done

mkdir -p "$work/qemu/hw/vmgpu" "$work/qemu/include/hw/vmgpu"
for f in "$VMGPU_ROOT"/qemu-device/*; do
	case "$f" in
	*.mak) ;;
	*) cp "$f" "$work/qemu/hw/vmgpu/" ;;
	esac
done
cp "$VMGPU_ROOT/include/hw/vmgpu_hw.h" "$work/qemu/include/hw/vmgpu/"
commit <<'EOF'
hw/vmgpu: add the vmgpu PCIe virtual GPU

vmgpu is a virtual GPU whose memory segments, aperture segment, paging
engine, host aperture and display controller follow the hardware
contract in include/hw/vmgpu/vmgpu_hw.h (Documentation/hw-contract.rst
in the vmgpu tree). Its Linux driver is the out-of-tree vmgpu DRM/TTM
module.
EOF

qemu_build_vmgpu "$work/qemu"
commit <<'EOF'
hw: build hw/vmgpu

Kconfig VMGPU defaults to y with PCI devices; the trace events of
hw/vmgpu join the tree's.
EOF

base=$(git -C "$work/qemu" rev-list --max-parents=0 HEAD)
git -C "$work/qemu" format-patch -q -o "$out" "$base"
# They must apply to the untouched tree, one after the other.
(cd "$pristine" && git apply --check "$out"/*.patch) ||
	die "the series does not apply to QEMU $ver"
log "QEMU $ver patch series in $out:"
ls -1 "$out"
