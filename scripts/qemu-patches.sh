#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make qemu-patches: the vmgpu device as the patch series git format-patch
# gives against QEMU 10.0's tree, in out/qemu-patches/, for building it
# into one's own QEMU (git am, or patch -p1). First any fixes to QEMU
# itself (scripts/qemu-patches), then the device (hw/vmgpu and the
# hardware contract's header), then the lines that build it. The base is
# the QEMU source scripts/build-qemu.sh fetched, with its three build lines
# taken out again; the series is checked to apply to a copy of that tree.
set -euo pipefail

. "$(dirname "$0")/common.sh"

src=$(ls -d "$VMGPU_CACHE"/qemu-10.0.*/src 2>/dev/null | sort -V | tail -n 1)
[ -f "$src/.vmgpu-fetched" ] || die "no QEMU source yet: make qemu first"
ver=$(basename "$(dirname "$src")")
ver=${ver#qemu-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out="$VMGPU_OUT/qemu-patches"
rm -rf "$out"
mkdir -p "$out"

# The files the series touches, as QEMU has them: build-qemu.sh's fixes
# and build lines taken out again.
shopt -s nullglob
fixes=("$VMGPU_ROOT"/scripts/qemu-patches/*.patch)
shopt -u nullglob
build_files=(meson.build hw/meson.build hw/Kconfig)
base_files=("${build_files[@]}" $(cat /dev/null "${fixes[@]}" |
	sed -n 's|^+++ b/\([^\t]*\).*|\1|p' | sort -u))
git init -q "$work/qemu"
for f in "${base_files[@]}"; do
	mkdir -p "$work/qemu/$(dirname "$f")"
	cp "$src/$f" "$work/qemu/$f"
done
for ((i = ${#fixes[@]} - 1; i >= 0; i--)); do
	patch -s -R -p1 -d "$work/qemu" <"${fixes[i]}"
done
sed -i "/^subdir('vmgpu')$/d" "$work/qemu/hw/meson.build"
sed -i "/^source vmgpu\/Kconfig$/d" "$work/qemu/hw/Kconfig"
sed -i "/^    'hw\/vmgpu',$/d" "$work/qemu/meson.build"
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

echo "subdir('vmgpu')" >>"$work/qemu/hw/meson.build"
echo "source vmgpu/Kconfig" >>"$work/qemu/hw/Kconfig"
sed -i "s|^    'hw/misc',$|    'hw/misc',\n    'hw/vmgpu',|" "$work/qemu/meson.build"
commit <<'EOF'
hw: build hw/vmgpu

Kconfig VMGPU defaults to y with PCI devices; the trace events of
hw/vmgpu join the tree's.
EOF

base=$(git -C "$work/qemu" rev-list --max-parents=0 HEAD)
git -C "$work/qemu" format-patch -q -o "$out" "$base"
# They must apply to the real tree: a copy of it without the device.
mkdir -p "$work/check"
cp -a "$src/." "$work/check/"
rm -rf "$work/check/hw/vmgpu" "$work/check/include/hw/vmgpu"
for f in "${base_files[@]}"; do
	git -C "$work/qemu" show "$base:$f" >"$work/check/$f"
done
for p in "$out"/*.patch; do
	patch -s --batch -p1 -d "$work/check" <"$p" ||
		die "$(basename "$p") does not apply to QEMU $ver"
done
log "QEMU $ver patch series in $out:"
ls -1 "$out"
