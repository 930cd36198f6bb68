#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Boot every device configuration in test mode and report. Up to
# VMGPU_TEST_JOBS guests (default: the number of CPUs) run at once, each
# with its own log. usage: test.sh [CONFIG...]   (default: every file in configs/)
set -uo pipefail

. "$(dirname "$0")/common.sh"

configs=("$@")
if [ ${#configs[@]} = 0 ]; then
	for f in "$VMGPU_ROOT"/scripts/configs/*; do
		configs+=("$(basename "$f")")
	done
fi

logs="$VMGPU_OUT/logs"
mkdir -p "$logs"

jobs_max=${VMGPU_TEST_JOBS:-$(nproc)}

boot() {
	local c=$1 start rc=0

	start=$(date +%s)
	"$VMGPU_ROOT/scripts/run-guest.sh" --mode test --config "$c" --log "$logs/$c.log" || rc=$?
	[ $rc = 0 ] || log "guest '$c' exited with status $rc"
	log "'$c' took $(($(date +%s) - start)) s, log in $logs/$c.log"
}

log "device tests (qtest, no guest)"
python3 "$VMGPU_ROOT/tests/device/vmgpu_device_test.py" "$VMGPU_OUT/qemu-system-x86_64" \
	>"$logs/device.log" 2>&1 &
files=(--host "$logs/device.log")
for c in "${configs[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
		wait -n
	done
	log "booting configuration '$c'"
	boot "$c" &
	files+=("$logs/$c.log")
done
wait
python3 "$VMGPU_ROOT/scripts/report.py" "${files[@]}"
