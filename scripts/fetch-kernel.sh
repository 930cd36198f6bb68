#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Fetch the guest kernel (the version linux-image-6.12-amd64 depends on now)
# and, from linux-source-6.12, the kselftest headers and checkpatch. Cached
# in $VMGPU_CACHE by version; prints the kernel's directory.
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

srcver=$(apt-cache depends linux-source-6.12 2>/dev/null |
	sed -n 's/.*Depends: linux-source-\(6\.12\.[^ ]*\)$/\1/p' | head -n 1)
[ -n "$srcver" ] || srcver=$(apt-cache policy linux-source-6.12 |
	sed -n 's/^  Candidate: \(.*\)/\1/p')
sdir="$VMGPU_CACHE/linux-source-$srcver"
if [ ! -f "$sdir/.fetched" ]; then
	log "extracting kselftest headers and checkpatch from linux-source $srcver"
	rm -rf "$sdir"
	mkdir -p "$sdir/deb"
	(cd "$sdir/deb" && apt-get download -qq "linux-source-6.12=$srcver" 2>/dev/null ||
		apt-get download -qq linux-source-6.12 2>/dev/null)
	inner=$(dpkg-deb -c "$sdir"/deb/*.deb | awk '/linux-source-.*\.tar\.xz$/ {print $6}')
	dpkg-deb --fsys-tarfile "$sdir"/deb/*.deb | tar -xO "${inner#/}" >"$sdir/src.tar.xz"
	xz -T2 -dc "$sdir/src.tar.xz" | tar -x -C "$sdir" --strip-components=1 --wildcards \
		'*/tools/testing/selftests/kselftest*' '*/scripts/checkpatch.pl' \
		'*/scripts/spelling.txt' '*/scripts/const_structs.checkpatch'
	rm -rf "$sdir/deb" "$sdir/src.tar.xz"
	touch "$sdir/.fetched"
fi
ln -sfn "$sdir" "$VMGPU_CACHE/linux-source"
echo "$kdir"
