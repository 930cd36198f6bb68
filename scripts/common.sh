# SPDX-License-Identifier: MIT
# Shared settings for the vmgpu scripts; sourced, not run.

VMGPU_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VMGPU_CACHE=${VMGPU_CACHE:-$HOME/.cache/vmgpu}
VMGPU_OUT=${VMGPU_OUT:-$VMGPU_ROOT/out}

log() {
	echo "vmgpu: $*" >&2
}

die() {
	log "error: $*"
	exit 1
}

# The kernel ABI version (e.g. 6.12.57+deb12-amd64) that the
# linux-image-6.12-amd64 metapackage currently depends on. Asked of apt
# every time (it is a local lookup), since old versions vanish from the mirror.
resolve_kernel_version() {
	local v

	if [ -n "${VMGPU_KVER:-}" ]; then
		echo "$VMGPU_KVER"
		return
	fi
	v=$(apt-cache depends linux-image-6.12-amd64 2>/dev/null |
		sed -n 's/.*Depends: linux-image-\(6\.12\.[^ ]*-amd64\)$/\1/p' | head -n 1)
	[ -n "$v" ] || die "apt knows no linux-image-6.12-amd64 (is bookworm-security configured?)"
	echo "$v"
}

# The linux-source-6.12 version apt has now (the same kernel as the image).
resolve_source_version() {
	local v

	v=$(apt-cache depends linux-source-6.12 2>/dev/null |
		sed -n 's/.*Depends: linux-source-\(6\.12\.[^ ]*\)$/\1/p' | head -n 1)
	[ -n "$v" ] || v=$(apt-cache policy linux-source-6.12 |
		sed -n 's/^  Candidate: \(.*\)/\1/p')
	[ -n "$v" ] && [ "$v" != "(none)" ] || die "apt knows no linux-source-6.12"
	echo "$v"
}

# Unpack the whole linux-source-6.12 tree once per version; prints its path.
# It gives the kselftest headers and checkpatch, and the debug kernel.
fetch_linux_source() {
	local ver dir inner

	ver=$(resolve_source_version)
	dir="$VMGPU_CACHE/linux-source-$ver"
	if [ ! -f "$dir/.vmgpu-full" ]; then
		log "unpacking linux-source $ver"
		rm -rf "$dir"
		mkdir -p "$dir/deb"
		(cd "$dir/deb" && { apt-get download -qq "linux-source-6.12=$ver" 2>/dev/null ||
			apt-get download -qq linux-source-6.12 2>/dev/null; })
		inner=$(dpkg-deb -c "$dir"/deb/*.deb | awk '/linux-source-.*\.tar\.xz$/ {print $6}')
		dpkg-deb --fsys-tarfile "$dir"/deb/*.deb | tar -xO "${inner#/}" |
			xz -T0 -dc | tar -x -C "$dir" --strip-components=1
		rm -rf "$dir/deb"
		touch "$dir/.vmgpu-full"
	fi
	ln -sfn "$dir" "$VMGPU_CACHE/linux-source"
	echo "$dir"
}

# How QEMU is configured: a minimal x86_64-softmmu with the devices
# qemu-device/devices-x86_64.mak names (build-qemu.sh; qemu-tcg-check.sh
# builds its variants alike).
QEMU_CONFIG_ARGS=(
	--target-list=x86_64-softmmu --without-default-features --without-default-devices
	--with-devices-x86_64=vmgpu-devices --python=/usr/bin/python3 --disable-install-blobs
	--enable-fdt=system --enable-tcg --enable-pixman --enable-png --disable-docs
	--disable-werror
)

# fetch_qemu_source VER DIR: Debian's QEMU VER source, its own patches
# applied, into DIR (replaced).
fetch_qemu_source() {
	local ver=$1 dir=$2
	rm -rf "$dir.fetch" "$dir"
	mkdir -p "$dir.fetch"
	(cd "$dir.fetch" && apt-get source -qq "qemu=1:$ver" >/dev/null 2>&1 ||
		apt-get source -qq "qemu=$ver" >/dev/null)
	mv "$dir.fetch"/qemu-*/ "$dir"
	rm -rf "$dir.fetch"
}

# qemu_build_vmgpu DIR: the lines of QEMU's tree in DIR that build
# hw/vmgpu (Kconfig, meson, trace events), added once.
qemu_build_vmgpu() {
	local dir=$1
	grep -q "subdir('vmgpu')" "$dir/hw/meson.build" ||
		echo "subdir('vmgpu')" >>"$dir/hw/meson.build"
	grep -q "source vmgpu/Kconfig" "$dir/hw/Kconfig" ||
		echo "source vmgpu/Kconfig" >>"$dir/hw/Kconfig"
	grep -q "'hw/vmgpu'," "$dir/meson.build" ||
		sed -i "s|^    'hw/misc',$|    'hw/misc',\n    'hw/vmgpu',|" "$dir/meson.build"
}
