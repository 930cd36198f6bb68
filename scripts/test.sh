#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Boot every device configuration in test mode, and the checkers run, and
# report. Up to VMGPU_TEST_JOBS guests (default: the number of CPUs) run at
# once, each with its own log. usage: test.sh [CONFIG|checkers...]
# (default: every file in configs/ and checkers)
set -uo pipefail

. "$(dirname "$0")/common.sh"

# Named runs only, or every configuration plus the checkers run (the
# debug kernel must catch deliberate bugs, scripts/guest/run-checkers).
runs=("$@")
if [ ${#runs[@]} = 0 ]; then
	runs=(checkers)
	for f in "$VMGPU_ROOT"/scripts/configs/*; do
		runs+=("$(basename "$f")")
	done
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

log "device tests (qtest, no guest)"
python3 "$VMGPU_ROOT/tests/device/vmgpu_device_test.py" "$VMGPU_OUT/qemu-system-x86_64" \
	>"$logs/device.log" 2>&1 &
files=(--host "$logs/device.log")
for c in "${runs[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
		wait -n
	done
	log "booting '$c'"
	if [ "$c" = checkers ]; then
		boot checkers checkers rootport &
	else
		boot "$c" test "$c" &
	fi
	files+=("$logs/$c.log")
done
wait
# What the host checked for the guests (scripts/vmgpu_host_agent.py).
for c in "${runs[@]}"; do
	[ ! -f "$logs/$c-host.log" ] || files+=(--host "$logs/$c-host.log")
done
python3 "$VMGPU_ROOT/scripts/report.py" "${files[@]}"
