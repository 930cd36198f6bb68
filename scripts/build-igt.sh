#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Fetch IGT GPU Tools 2.x source from Debian (trixie deb-src, source package
# intel-gpu-tools, Debian patches applied) and build only the generic KMS
# tests and dumb_buffer, copied to $VMGPU_OUT/igt/tests/ with libigt.so.0 in
# $VMGPU_OUT/igt/lib/ and libs.txt, every shared library they need (ldd).
# Everything lives in $VMGPU_CACHE/igt-$ver keyed by the Debian version, so a
# second run is a no-op.
#
# Debian 12 is new enough: IGT 2.0 asks for meson >= 0.47.2 (bookworm has
# 1.0; built here with 1.7 from bookworm-backports, see setup.sh), libdrm
# >= 2.4.82 (2.4.114) and libproc2 or libprocps (libproc2-dev 4.0.2): no
# backport and no patch to IGT. Only cairo 1.16 (< 1.17.2) costs something:
# IGT skips its HDR pixel formats. libigt is a shared library by IGT's own
# meson.build (not a default_library switch), so the tests stay dynamically
# linked: copy the igt/ tree whole (RUNPATH $ORIGIN/../lib), or libigt.so.0
# into the loader's default path, plus the system libraries of libs.txt.
# No libdrm_intel/nouveau/amdgpu, runner, overlay, chamelium, docs, man
# pages, libunwind (so no backtraces on a failure) nor valgrind.
#
# VMGPU_IGT_SRC=/path/igt-gpu-tools-2.0.tar.xz uses that upstream tarball of
# the same version instead of apt-get source, for a mirror that lists the
# source package but lacks its files (deb.debian.org as reached from the
# vmgpu workplace answers 404 for intel-gpu-tools 2.0-1's .dsc and tarballs);
# so does a tarball of that name in the cache directory, $VMGPU_CACHE/igt-VER/.
set -euo pipefail

. "$(dirname "$0")/common.sh"

TESTS=(
	kms_atomic kms_flip kms_vblank kms_cursor_legacy kms_addfb_basic kms_getfb
	kms_prop_blob kms_properties kms_setmode kms_plane kms_pipe_crc_basic
	kms_atomic_transition kms_rmfb dumb_buffer vgem_basic
)
DEPS=(
	dpkg-dev meson ninja-build pkg-config python3 libdrm-dev libpciaccess-dev
	libkmod-dev libproc2-dev libdw-dev libpixman-1-dev libcairo2-dev libudev-dev
	libglib2.0-dev zlib1g-dev
)
MESON_OPTS=(
	--buildtype=debugoptimized -Db_ndebug=false -Dtests=enabled -Dlibdrm_drivers=
	-Drunner=disabled -Doping=disabled -Doverlay=disabled -Dchamelium=disabled
	-Dvalgrind=disabled -Dlibunwind=disabled -Dman=disabled -Ddocs=disabled
	-Dtestplan=disabled -Dsphinx=disabled -Dxe_eudebug=disabled -Dvmtb=disabled
)

ver=$(apt-cache showsrc intel-gpu-tools 2>/dev/null |
	sed -n 's/^Version: \(2\.[^ ]*\)$/\1/p' | sort -V | tail -n 1)
[ -n "$ver" ] || die "no intel-gpu-tools 2.x source known to apt (run scripts/setup.sh)"
upstream=${ver%-*}
top="$VMGPU_CACHE/igt-$ver"
src="$top/src"

missing=()
for p in "${DEPS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing: ${missing[*]}"
	[ "$(id -u)" = 0 ] || sudo=sudo
	DEBIAN_FRONTEND=noninteractive ${sudo:-} apt-get install -y -qq --no-install-recommends \
		"${missing[@]}" >/dev/null
fi

if [ ! -f "$src/.vmgpu-fetched" ]; then
	rm -rf "$top/fetch" "$src"
	mkdir -p "$top/fetch"
	cached="$top/igt-gpu-tools-$upstream.tar.xz"
	[ -n "${VMGPU_IGT_SRC:-}" ] || [ ! -f "$cached" ] || VMGPU_IGT_SRC=$cached
	if [ -n "${VMGPU_IGT_SRC:-}" ]; then
		log "unpacking IGT $upstream from $VMGPU_IGT_SRC"
		tar -xf "$VMGPU_IGT_SRC" -C "$top/fetch"
	else
		log "fetching IGT $ver source"
		(cd "$top/fetch" && apt-get source -qq "intel-gpu-tools=$ver" >/dev/null) ||
			die "apt-get source intel-gpu-tools=$ver failed (set VMGPU_IGT_SRC to an upstream tarball)"
	fi
	mv "$top/fetch"/*/ "$src"
	rm -rf "$top/fetch"
	grep -q "version : '$upstream'," "$src/meson.build" ||
		{ rm -rf "$src"; die "IGT source is not version $upstream"; }
	echo "${VMGPU_IGT_SRC:-apt}" >"$src/.vmgpu-fetched"
fi

key=$(echo "${MESON_OPTS[*]}" | sha256sum | cut -c1-12)
build="$top/build-$key"
if [ ! -f "$build/build.ninja" ]; then
	log "configuring IGT $ver in $build"
	rm -rf "$build"
	meson setup "${MESON_OPTS[@]}" "$build" "$src" >"$top/meson-$key.log" 2>&1 ||
		{ tail -n 30 "$top/meson-$key.log"; rm -rf "$build"; die "IGT meson setup failed"; }
fi

log "building ${#TESTS[@]} IGT tests ($ver)"
ninja -C "$build" -j "${VMGPU_JOBS:-$(nproc)}" "${TESTS[@]/#/tests/}" >"$build/ninja.log" 2>&1 ||
	{ grep -B2 -A12 -m3 'error' "$build/ninja.log" || tail -n 40 "$build/ninja.log"; die "IGT build failed"; }

# A relocatable tree: the tests' RUNPATH is $ORIGIN/../lib.
dest=$(realpath -sm "$VMGPU_OUT/igt")
mkdir -p "$dest/tests" "$dest/lib"
for f in "${TESTS[@]/#/tests/}" lib/libigt.so.0; do
	cmp -s "$build/$f" "$dest/$f" || cp "$build/$f" "$dest/$f"
done
# The loader and every library, as absolute paths, one a line.
for t in "${TESTS[@]}"; do ldd "$dest/tests/$t"; done |
	awk '/=> \// { print $3 } /^\t\// { print $1 }' | xargs realpath -s | sort -u >"$dest/libs.txt.new"
grep -qx "$dest/lib/libigt.so.0" "$dest/libs.txt.new" || die "the IGT tests do not find $dest/lib/libigt.so.0"
mv "$dest/libs.txt.new" "$dest/libs.txt"
echo "$ver" >"$VMGPU_OUT/igt-version"
log "IGT $ver tests in $dest"
