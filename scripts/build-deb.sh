#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make deb: two Debian packages in out/deb/, for a Debian 12 machine running
# Linux 6.12 (Debian's linux-image-6.12 from bookworm-backports):
#   vmgpu-dkms   vmgpu.ko's sources and headers, built by DKMS for every
#                6.12 kernel with headers (dkms.conf: BUILD_EXCLUSIVE_KERNEL)
#   vmgpu-tools  vmgpu-info, vmgpu-top, vmgpu-pressure and the demos
#   libvmgpu-dev libvmgpu (static library), its headers and pkg-config file
# scripts/test-dkms.sh installs the first with dkms and removes it again.
set -euo pipefail
umask 022

. "$(dirname "$0")/common.sh"

cd "$VMGPU_ROOT"
driver_version=$(sed -n 's/^\t\.major = \([0-9]*\),/\1/p; s/^\t\.minor = \([0-9]*\),/\1/p' \
	drivers/gpu/drm/vmgpu/vmgpu_drv.c | paste -sd.)
# Sortable across commits of a clone: the driver's version, then the commit.
version="$driver_version+git$(git rev-list --count HEAD).$(git rev-parse --short=12 HEAD)"
deb="$VMGPU_OUT/deb"
stage="$VMGPU_OUT/deb/stage"
rm -rf "$stage"
mkdir -p "$deb"
rm -f "$deb"/*.deb

# vmgpu-dkms: the tree Kbuild builds from, as DKMS copies it; the files git
# tracks, as they are in the work tree (what make test tested).
src="$stage/dkms/usr/src/vmgpu-$version"
mkdir -p "$src" "$stage/dkms/DEBIAN"
git ls-files -z Kbuild drivers/gpu/drm/vmgpu include/hw include/uapi |
	tar --null -T - -c | tar -x -C "$src"
sed "s/@VERSION@/$version/g" scripts/deb/dkms.conf >"$src/dkms.conf"
sed "s/@VERSION@/$version/g" scripts/deb/dkms.control >"$stage/dkms/DEBIAN/control"
for f in postinst prerm; do
	sed "s/@VERSION@/$version/g" "scripts/deb/dkms.$f" >"$stage/dkms/DEBIAN/$f"
	chmod 755 "$stage/dkms/DEBIAN/$f"
done
chmod -R u=rwX,go=rX "$src"
dpkg-deb --root-owner-group -Zxz --build "$stage/dkms" "$deb/vmgpu-dkms_${version}_all.deb" >/dev/null

# vmgpu-tools (the programs) and libvmgpu-dev (the library to build
# against), built here against the packages they depend on.
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
tools="$stage/tools"
dev="$stage/dev"
mkdir -p "$tools/DEBIAN" "$tools/usr/bin" "$dev/DEBIAN" "$dev/usr/lib/$multiarch/pkgconfig" \
	"$dev/usr/include/vmgpu/hw"
bins=(vmgpu-info vmgpu-top vmgpu-pressure vmgpu-demo vmgpu-stream-demo vmgpu-display-demo)
make -s -C userspace OUT="$stage/userspace" "$stage/userspace/libvmgpu.a" \
	"${bins[@]/#/$stage/userspace/bin/}" >/dev/null
for t in "${bins[@]}"; do
	install -s -m 755 "$stage/userspace/bin/$t" "$tools/usr/bin/"
done
install -m 644 "$stage/userspace/libvmgpu.a" "$dev/usr/lib/$multiarch/"
install -m 644 userspace/libvmgpu/libvmgpu.h include/uapi/drm/vmgpu_drm.h "$dev/usr/include/vmgpu/"
install -m 644 include/hw/vmgpu_hw.h "$dev/usr/include/vmgpu/hw/"
sed "s/@VERSION@/$version/g; s/@MULTIARCH@/$multiarch/g" scripts/deb/libvmgpu.pc \
	>"$dev/usr/lib/$multiarch/pkgconfig/libvmgpu.pc"
for p in tools dev; do
	sed "s/@VERSION@/$version/g; s/@ARCH@/$arch/g" "scripts/deb/$p.control" \
		>"$stage/$p/DEBIAN/control"
done
dpkg-deb --root-owner-group -Zxz --build "$tools" "$deb/vmgpu-tools_${version}_$arch.deb" >/dev/null
dpkg-deb --root-owner-group -Zxz --build "$dev" "$deb/libvmgpu-dev_${version}_$arch.deb" >/dev/null
rm -rf "$stage"
log "packages in $deb:"
ls -1 "$deb"/*_"$version"_*.deb
