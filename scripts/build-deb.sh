#!/bin/bash
# SPDX-License-Identifier: MIT
#
# make deb: two Debian packages in out/deb/, for a Debian 12 machine running
# Linux 6.12 (Debian's linux-image-6.12 from bookworm-backports):
#   vmgpu-dkms   vmgpu.ko's sources and headers, built by DKMS for every
#                6.12 kernel with headers (dkms.conf: BUILD_EXCLUSIVE_KERNEL)
#   vmgpu-tools  libvmgpu (static library and headers), vmgpu-info,
#                vmgpu-top, vmgpu-pressure and the demos
# scripts/test-dkms.sh installs the first with dkms and removes it again.
set -euo pipefail

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

# vmgpu-tools: built here against the packages it depends on.
tools="$stage/tools"
mkdir -p "$tools/DEBIAN" "$tools/usr/bin" "$tools/usr/lib/x86_64-linux-gnu" \
	"$tools/usr/include/vmgpu"
bins=(vmgpu-info vmgpu-top vmgpu-pressure vmgpu-demo vmgpu-stream-demo vmgpu-display-demo)
make -s -C userspace OUT="$stage/userspace" "$stage/userspace/libvmgpu.a" \
	"${bins[@]/#/$stage/userspace/bin/}" >/dev/null
for t in "${bins[@]}"; do
	install -m 755 "$stage/userspace/bin/$t" "$tools/usr/bin/"
done
install -m 644 "$stage/userspace/libvmgpu.a" "$tools/usr/lib/x86_64-linux-gnu/"
install -m 644 userspace/libvmgpu/libvmgpu.h include/uapi/drm/vmgpu_drm.h "$tools/usr/include/vmgpu/"
install -D -m 644 include/hw/vmgpu_hw.h "$tools/usr/include/vmgpu/hw/vmgpu_hw.h"
sed "s/@VERSION@/$version/g" scripts/deb/libvmgpu.pc \
	| install -D -m 644 /dev/stdin "$tools/usr/lib/x86_64-linux-gnu/pkgconfig/libvmgpu.pc"
sed "s/@VERSION@/$version/g" scripts/deb/tools.control >"$tools/DEBIAN/control"
dpkg-deb --root-owner-group -Zxz --build "$tools" "$deb/vmgpu-tools_${version}_amd64.deb" >/dev/null
rm -rf "$stage"
log "packages in $deb:"
ls -1 "$deb"/*_"$version"_*.deb
