#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Boot every device configuration in test mode, the checkers run and the
# QEMU TCG check, and report. Up to VMGPU_TEST_JOBS guests (default: the
# number of CPUs) run at once, each with its own log.
# usage: test.sh [CONFIG|checkers|qemu-tcg...]
# (default: every file in configs/, checkers and qemu-tcg)
set -uo pipefail

. "$(dirname "$0")/common.sh"

# Named runs only, or every configuration plus the checkers run (the
# debug kernel must catch deliberate bugs, scripts/guest/run-checkers) and
# the QEMU TCG check (scripts/qemu-tcg-check.sh).
runs=("$@")
full=0
if [ ${#runs[@]} = 0 ]; then
	full=1
	runs=(checkers)
	for f in "$VMGPU_ROOT"/scripts/configs/*; do
		runs+=("$(basename "$f")")
	done
	runs+=(qemu-tcg)
fi

logs="$VMGPU_OUT/logs"
mkdir -p "$logs"

jobs_max=${VMGPU_TEST_JOBS:-$(nproc)}

# boot NAME MODE CONFIG: one guest, its serial log in $logs/NAME.log.
boot() {
	local name=$1 mode=$2 c=$3 start rc=0

	start=$(date +%s)
	"$VMGPU_ROOT/scripts/run-guest.sh" --mode "$mode" --config "$c" --log "$logs/$name.log" || rc=$?
	[ $rc = 0 ] || log "guest '$name' exited with status $rc"
	log "'$name' took $(($(date +%s) - start)) s, log in $logs/$name.log"
}

# Every mutant (scripts/mutants.sh) still changes the code it names: one
# whose code has moved on breaks nothing, and its test proves nothing.
mutant_patterns() {
	echo "vmgpu-test: begin test vmgpu_mutants_test"
	echo "TAP version 13"
	echo "1..1"
	if "$VMGPU_ROOT/scripts/mutants.sh" --check; then
		echo "ok 1 mutants.every_substitution_changes_its_file"
	else
		echo "not ok 1 mutants.every_substitution_changes_its_file"
	fi
	echo "vmgpu-test: end test vmgpu_mutants_test rc=0"
}
mutant_patterns >"$logs/mutants.log" 2>&1

log "device tests (qtest, no guest)"
python3 "$VMGPU_ROOT/tests/device/vmgpu_device_test.py" "$VMGPU_OUT/qemu-system-x86_64" \
	>"$logs/device.log" 2>&1 &
files=(--host "$logs/device.log" --host "$logs/mutants.log")
for c in "${runs[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
		wait -n
	done
	log "booting '$c'"
	if [ "$c" = checkers ]; then
		boot checkers checkers rootport &
	elif [ "$c" = qemu-tcg ]; then
		# Two guests of its own, one after the other (TAP on the host).
		"$VMGPU_ROOT/scripts/qemu-tcg-check.sh" >"$logs/qemu-tcg.log" 2>&1 &
		files+=(--host)
	else
		boot "$c" test "$c" &
	fi
	files+=("$logs/$c.log")
done
wait
# The guest tests built as a kselftest target the documented way, in the
# Linux tree setup.sh fetched (the target is copied in for the build).
kselftest_target_builds() {
	local ksrc="$VMGPU_CACHE/linux-source" target=drivers/gpu/vmgpu out built
	out=$(mktemp -d)
	rm -rf "$ksrc/tools/testing/selftests/$target"
	cp -r "$VMGPU_ROOT/tools/testing/selftests/$target" "$ksrc/tools/testing/selftests/$target"
	make -s -C "$ksrc/tools/testing/selftests" TARGETS="$target" VMGPU_SRC="$VMGPU_ROOT" \
		O="$out" 2>&1 | grep -E 'error|Error' || true
	built=$(find "$out" -name 'vmgpu_*_test' -type f -perm -u+x | wc -l)
	rm -rf "$ksrc/tools/testing/selftests/$target" "$out"
	echo "kselftest target: $built programs built"
	[ "$built" = "$(ls "$VMGPU_ROOT"/userspace/tests/vmgpu_*_test.c | wc -l)" ]
}

# Packaging, on the host once the guests are done (it compiles), in a full
# run: make deb and its DKMS package installed and removed, make
# qemu-patches applied to QEMU's tree, the kselftest target.
packaging() {
	echo "vmgpu-test: begin test vmgpu_packaging_test"
	echo "TAP version 13"
	echo "1..3"
	if "$VMGPU_ROOT/scripts/build-deb.sh"; then
		echo "ok 1 packaging.make_deb"
	else
		echo "not ok 1 packaging.make_deb"
	fi
	if "$VMGPU_ROOT/scripts/qemu-patches.sh"; then
		echo "ok 2 packaging.qemu_patches_apply_to_qemu"
	else
		echo "not ok 2 packaging.qemu_patches_apply_to_qemu"
	fi
	if kselftest_target_builds; then
		echo "ok 3 packaging.kselftest_target_builds"
	else
		echo "not ok 3 packaging.kselftest_target_builds"
	fi
	echo "vmgpu-test: end test vmgpu_packaging_test rc=0"
}
if [ $full = 1 ]; then
	log "packages (make deb, DKMS) and the QEMU patch series"
	packaging >"$logs/packaging.log" 2>&1
	"$VMGPU_ROOT/scripts/test-dkms.sh" >"$logs/dkms.log" 2>&1
	files+=(--host "$logs/packaging.log" --host "$logs/dkms.log")
fi
# What the host checked for the guests (scripts/vmgpu_host_agent.py).
for c in "${runs[@]}"; do
	[ ! -f "$logs/$c-host.log" ] || files+=(--host "$logs/$c-host.log")
done
python3 "$VMGPU_ROOT/scripts/report.py" "${files[@]}"
