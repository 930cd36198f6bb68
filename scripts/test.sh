#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Boot every device configuration in test mode, one after the other, and
# report. usage: test.sh [CONFIG...]   (default: every file in configs/)
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

log "device tests (qtest, no guest)"
python3 "$VMGPU_ROOT/tests/device/vmgpu_device_test.py" "$VMGPU_OUT/qemu-system-x86_64" \
	>"$logs/device.log" 2>&1
files=(--host "$logs/device.log")
for c in "${configs[@]}"; do
	log "booting configuration '$c'"
	start=$(date +%s)
	"$VMGPU_ROOT/scripts/run-guest.sh" --mode test --config "$c" --log "$logs/$c.log" ||
		log "guest '$c' exited with status $?"
	log "'$c' took $(($(date +%s) - start)) s, log in $logs/$c.log"
	files+=("$logs/$c.log")
done
python3 "$VMGPU_ROOT/scripts/report.py" "${files[@]}"
