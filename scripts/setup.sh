#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Install what building and booting vmgpu needs on a Debian 12 host.
# Idempotent: a second run on a set-up machine only checks and returns.
set -euo pipefail

. "$(dirname "$0")/common.sh"

PACKAGES=(
	build-essential bc bison flex kmod cpio xz-utils zstd dpkg-dev patch pkg-config
	ninja-build libglib2.0-dev libpixman-1-dev libfdt-dev python3-venv libpng-dev
	seabios qemu-system-data busybox-static libdrm-dev sparse libelf-dev rsync
	libdrm-tests gdb
)

as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

add_sources() {
	local changed=0 f

	f=/etc/apt/sources.list.d/vmgpu-backports.list
	if [ ! -f "$f" ]; then
		echo "deb http://deb.debian.org/debian bookworm-backports main" |
			as_root tee "$f" >/dev/null
		changed=1
	fi
	f=/etc/apt/sources.list.d/vmgpu-trixie-src.list
	if [ ! -f "$f" ]; then
		echo "deb-src http://deb.debian.org/debian trixie main" |
			as_root tee "$f" >/dev/null
		changed=1
	fi
	# Refresh daily: package versions on the mirror move and old ones vanish.
	if [ $changed = 1 ] || [ -z "$(find "$VMGPU_CACHE/.apt-updated" -mmin -1440 2>/dev/null)" ]; then
		as_root apt-get update -qq
		touch "$VMGPU_CACHE/.apt-updated"
	fi
}

missing_packages() {
	local p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || echo "$p"
	done
}

meson_is_recent() {
	command -v meson >/dev/null &&
		dpkg --compare-versions "$(meson --version)" ge 1.5
}

mkdir -p "$VMGPU_CACHE"
add_sources

missing=$(missing_packages "${PACKAGES[@]}")
if [ -n "$missing" ]; then
	log "installing: $missing"
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq $missing >/dev/null
fi
# DKMS for make deb's package test (scripts/test-dkms.sh); its recommended
# headers are the host's 6.1 ones, which nothing here builds against.
if [ -n "$(missing_packages dkms)" ]; then
	log "installing dkms"
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq --no-install-recommends dkms >/dev/null
fi
if ! meson_is_recent; then
	log "installing meson from bookworm-backports"
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq -t bookworm-backports meson >/dev/null
fi

kver=$(resolve_kernel_version)
hdr="linux-headers-$kver"
if [ -n "$(missing_packages "$hdr")" ]; then
	log "installing $hdr"
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$hdr" >/dev/null
fi
log "host ready (guest kernel $kver)"
