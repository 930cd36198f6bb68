#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Build a guest initramfs: busybox, the modules vmgpu.ko needs, vmgpu.ko,
# the userspace programs and tests with their shared libraries, and the
# init script.
#
# usage: build-initramfs.sh [--debug KDIR] [EXTRA_DIR]
#   default: for Debian's kernel; the DRM/TTM modules vmgpu.ko needs are
#     resolved through depmod, not listed by hand. Output in out/.
#   --debug KDIR: for the debug kernel built in KDIR, which has them built
#     in; vmgpu.ko built against it. Output in out/debug/.
#   every executable in EXTRA_DIR is run after the project's tests.
set -euo pipefail

. "$(dirname "$0")/common.sh"

debug_kdir=
if [ "${1:-}" = --debug ]; then
	debug_kdir=$2
	shift 2
fi
extra=${1:-}
userspace="$VMGPU_OUT/userspace"

if [ -n "$debug_kdir" ]; then
	kver=$(make -s -C "$debug_kdir" kernelrelease)
	module="$VMGPU_OUT/module-debug/drivers/gpu/drm/vmgpu/vmgpu.ko"
	dest="$VMGPU_OUT/debug"
	vmlinuz="$debug_kdir/arch/x86/boot/bzImage"
else
	kdir=$("$VMGPU_ROOT/scripts/fetch-kernel.sh")
	kver=$(resolve_kernel_version)
	kroot="$kdir/root"
	module="$VMGPU_ROOT/drivers/gpu/drm/vmgpu/vmgpu.ko"
	dest="$VMGPU_OUT"
	vmlinuz="$kroot/boot/vmlinuz-$kver"
fi
mods="lib/modules/$kver"
root="$dest/initramfs"

[ -f "$module" ] || die "$module not built"

rm -rf "$root"
mkdir -p "$root"/{bin,dev,proc,sys,tmp,etc,usr/bin,"$mods/extra"} \
	"$root/usr/lib/vmgpu/tests" "$root/usr/lib/vmgpu/extra"
ln -s bin "$root/sbin"

cp /bin/busybox "$root/bin/busybox"
for app in $("$root/bin/busybox" --list); do
	[ -e "$root/bin/$app" ] || ln -s busybox "$root/bin/$app"
done

# Modules: what vmgpu.ko depends on, and what those depend on, from the
# kernel's own modules.dep. Decompressed, since busybox insmod may not
# understand .ko.xz.
if [ -z "$debug_kdir" ]; then
	# bochs and virtio_gpu: the displays make bench compares vmgpu's with;
	# vgem: an exporter for the PRIME import tests (and IGT's vgem_basic).
	deps="$(modinfo -F depends "$module" | tr ',' ' ') bochs virtio_gpu vgem"
	for dep in $deps; do
		modprobe -d "$kroot" -S "$kver" --show-depends "$dep" | awk '$1 == "insmod" { print $2 }'
	done | sort -u | while read -r ko; do
		rel=${ko#"$kroot/$mods/"}
		mkdir -p "$root/$mods/$(dirname "$rel")"
		case "$ko" in
		*.xz) xz -dc "$ko" >"$root/$mods/${rel%.xz}" ;;
		*) cp "$ko" "$root/$mods/$rel" ;;
		esac
	done
	cp "$kroot/$mods"/modules.{builtin,builtin.modinfo,order} "$root/$mods/"
else
	cp "$debug_kdir"/modules.{builtin,builtin.modinfo,order} "$root/$mods/"
	mkdir -p "$root/usr/lib/vmgpu/checkers"
	cp "$VMGPU_OUT/module-debug/checkers/vmgpu_checker_bugs.ko" "$root/usr/lib/vmgpu/checkers/"
	mkdir -p "$root/usr/lib/vmgpu/modules"
	cp "$VMGPU_OUT/module-debug/exporter/vmgpu_test_exporter.ko" "$root/usr/lib/vmgpu/modules/"
fi
cp "$module" "$root/$mods/extra/"
depmod -b "$root" "$kver"

cp "$userspace"/bin/* "$root/usr/bin/"
cp "$userspace"/tests/* "$root/usr/lib/vmgpu/tests/"
cp "$VMGPU_ROOT/tools/testing/selftests/drivers/gpu/vmgpu/settings" "$root/usr/lib/vmgpu/"
# A KMS client from outside the project (libdrm-tests, scripts/setup.sh).
cp /usr/bin/modetest "$root/usr/bin/"
# IGT GPU Tools' generic KMS tests, if built (scripts/build-igt.sh).
if [ -d "$VMGPU_OUT/igt/tests" ]; then
	mkdir -p "$root/usr/lib/vmgpu/igt"
	cp -r "$VMGPU_OUT/igt/tests" "$VMGPU_OUT/igt/lib" "$root/usr/lib/vmgpu/igt/"
fi
if [ -n "$extra" ]; then
	[ -d "$extra" ] || die "EXTRA=$extra is not a directory"
	find "$extra" -maxdepth 1 -type f -perm -u+x -exec cp {} "$root/usr/lib/vmgpu/extra/" \;
fi

# Shared libraries of every dynamically linked program, with the loader.
find "$root/usr" -type f -perm -u+x -exec ldd {} \; 2>/dev/null |
	awk '/=> \// { print $3 } /^\t\// { print $1 }' | sort -u |
	while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done

install -m 755 "$VMGPU_ROOT/scripts/guest/init" "$root/init"
install -m 755 "$VMGPU_ROOT/scripts/guest/run-tests" "$root/usr/bin/vmgpu-run-tests"
install -m 755 "$VMGPU_ROOT/scripts/guest/run-checkers" "$root/usr/bin/vmgpu-run-checkers"
install -m 755 "$VMGPU_ROOT/scripts/guest/text-poke-stress" "$root/usr/bin/vmgpu-text-poke-stress"

(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$dest/initramfs.cpio.gz"
cp "$vmlinuz" "$dest/vmlinuz"
echo "$kver" >"$dest/kernel-version"
