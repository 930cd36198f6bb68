#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Fetch the guest kernel (the version linux-image-6.12-amd64 depends on now)
# and linux-source-6.12 (kselftest headers, checkpatch, the debug kernel).
# Cached in $VMGPU_CACHE by version; prints the kernel's directory.
set -euo pipefail

. "$(dirname "$0")/common.sh"

kver=$(resolve_kernel_version)
kdir="$VMGPU_CACHE/kernel-$kver"

if [ ! -f "$kdir/.fetched" ]; then
	log "fetching guest kernel $kver"
	rm -rf "$kdir"
	mkdir -p "$kdir/deb"
	(cd "$kdir/deb" && apt-get download -qq "linux-image-$kver" 2>/dev/null)
	dpkg-deb -x "$kdir"/deb/linux-image-*.deb "$kdir/root"
	depmod -b "$kdir/root" "$kver"
	rm -rf "$kdir/deb"
	touch "$kdir/.fetched"
fi

fetch_linux_source >/dev/null
echo "$kdir"
