#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Check scripts/qemu-patches/0002 where it can fail. Under MTTCG, a store
# over translated code leaves a window between the invalidation and the
# store in which another vCPU can translate the old bytes; unpatched, a
# guest patching its text dies of "Oops: int3". The window is nanoseconds
# unless the host preempts the writer, so this builds two QEMUs from the
# tree build-qemu.sh uses, with a 1 ms sleep in that window from a minute
# after the first store over translated code (early in the firmware): as
# built, and with 0002 reverted. Each boots a guest that patches
# __schedule over and over (scripts/guest/text-poke-stress). The patched
# one must come through, the other must die: else the check can no longer
# tell. Prints TAP for report.py. usage: qemu-tcg-check.sh
set -uo pipefail

. "$(dirname "$0")/common.sh"

fix="$VMGPU_ROOT/scripts/qemu-patches/0002-accel-tcg-invalidate-code-again-after-the-store.patch"
src="$VMGPU_CACHE/qemu-$(cat "$VMGPU_OUT/qemu-version" 2>/dev/null)/src"
logs="$VMGPU_OUT/logs"

# The window: after notdirty_write()'s invalidation, before the store.
open_window() {
	python3 - "$1/accel/tcg/cputlb.c" <<'EOF'
import sys
path = sys.argv[1]
text = open(path).read()
call = "        tb_invalidate_phys_range_fast(ram_addr, size, retaddr);\n"
head = "static bool notdirty_write(" if "static bool notdirty_write(" in text \
    else "static void notdirty_write("
if text.count(call) != 1 or text.count(head) != 1:
    sys.exit("notdirty_write() is not where the check expects it")
window = """/* qemu-tcg-check.sh: a store's window held open from a minute on. */
static void tcg_check_window(void)
{
    static gint64 opens;

    if (!opens) {
        opens = g_get_monotonic_time() + 60 * G_USEC_PER_SEC;
    }
    if (g_get_monotonic_time() > opens) {
        g_usleep(1000);
    }
}

"""
text = text.replace(head, window + head)
text = text.replace(call, call + "        tcg_check_window();\n")
open(path, "w").write(text)
EOF
}

# build VARIANT: a QEMU with the window. A tree and build directory are
# kept per variant, made anew when the patches, the configuration or the
# window change; the device is synced into them (only what changed) and
# rebuilt, with one compiler at a time beside make test's guests.
build() {
	local variant=$1 key dir
	key=$( (echo "$variant ${QEMU_CONFIG_ARGS[*]}"; cat "$src/.vmgpu-patches" &&
		declare -f open_window) | sha256sum | cut -c1-12) || return 1
	dir="$(dirname "$src")/tcg-check-$variant-$key"
	if [ ! -f "$dir/build/build.ninja" ]; then
		rm -rf "$(dirname "$src")"/tcg-check-"$variant"-* &&
			mkdir -p "$dir" && cp -a "$src" "$dir/src" || return 1
		if [ "$variant" = unfixed ]; then
			patch -s --batch -R -F0 -p1 -d "$dir/src" <"$fix" || return 1
		fi
		open_window "$dir/src" && mkdir -p "$dir/build" || return 1
		(cd "$dir/build" && "$dir/src/configure" "${QEMU_CONFIG_ARGS[@]}" >configure.log 2>&1) ||
			{ tail -n 20 "$dir/build/configure.log" | sed 's/^/# /'; return 1; }
	fi
	# No -t: a changed file is newer than its object, an unchanged one
	# keeps its time.
	rsync -rc --delete "$src/hw/vmgpu/" "$dir/src/hw/vmgpu/" &&
		rsync -rc "$src/include/hw/vmgpu/" "$dir/src/include/hw/vmgpu/" || return 1
	ninja -j1 -C "$dir/build" qemu-system-x86_64 >"$dir/build/ninja.log" 2>&1 ||
		{ tail -n 20 "$dir/build/ninja.log" | sed 's/^/# /'; return 1; }
	echo "$dir/build/qemu-system-x86_64"
}

# boot VARIANT: its guest's log in $logs/tcg-VARIANT.log; fails if it did
# not boot.
boot() {
	local qemu

	rm -f "$logs/tcg-$1.log"
	qemu=$(build "$1") || { echo "# $1: build failed"; return 1; }
	VMGPU_QEMU=$qemu VMGPU_BOOT_TIMEOUT=300 "$VMGPU_ROOT/scripts/run-guest.sh" \
		--mode text-poke --config rebar --log "$logs/tcg-$1.log" 2>&1 | sed 's/^/# /'
	grep -a "vmgpu-guest: text-poke\|Oops" "$logs/tcg-$1.log" | sed 's/^/# /'
	[ -s "$logs/tcg-$1.log" ]
}

mkdir -p "$logs"
echo "vmgpu-test: begin test vmgpu_qemu_tcg_test"
echo "TAP version 13"
echo "1..2"
if [ ! -f "$src/.vmgpu-patches" ] || [ ! -f "$fix" ]; then
	echo "Bail out! no QEMU tree or no fix to check"
	exit 1
fi
if boot fixed && grep -aq "text-poke toggles [1-9]" "$logs/tcg-fixed.log" &&
	! grep -aq "Oops" "$logs/tcg-fixed.log"; then
	echo "ok 1 qemu_tcg.patched_text_runs_new_bytes"
else
	echo "not ok 1 qemu_tcg.patched_text_runs_new_bytes"
fi
if boot unfixed && grep -aq "Oops: int3" "$logs/tcg-unfixed.log"; then
	echo "ok 2 qemu_tcg.stale_text_dies_without_the_fix"
else
	echo "not ok 2 qemu_tcg.stale_text_dies_without_the_fix"
fi
echo "vmgpu-test: end test vmgpu_qemu_tcg_test rc=0"
