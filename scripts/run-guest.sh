#!/bin/bash
# SPDX-License-Identifier: MIT
#
# Boot the guest on a vmgpu device configuration.
#
# usage: run-guest.sh [--mode run|test|bench|bench-cpu|checkers|text-poke|shell]
#                     [--config NAME] [--log FILE]
#   NAME is a file in scripts/configs/ (default: rebar). VMGPU_QEMU names
#   another qemu-system-x86_64 than the one make qemu built.
set -euo pipefail

. "$(dirname "$0")/common.sh"

mode=run
config=rebar
logfile=

while [ $# -gt 0 ]; do
	case "$1" in
	--mode) mode=$2; shift 2 ;;
	--config) config=$2; shift 2 ;;
	--log) logfile=$2; shift 2 ;;
	*) die "unknown argument $1" ;;
	esac
done

conf="$VMGPU_ROOT/scripts/configs/$config"
[ -f "$conf" ] || die "no device configuration $conf"
SEGMENTS= BAR_SIZE= REBAR= BAR_EXPECT= HOST_APERTURE= BUS= ROOT_PORT_RESERVE= KERNEL=stock
NONCOHERENT=off SKIP_TESTS= PAGING_VA_MB=0
# Display heads (the device's heads property).
HEADS=1
# IGT's generic KMS tests: none, "basic" (make test) or "all" (make igt,
# which sets VMGPU_IGT).
IGT=
# Behind the emulated IOMMU (intel-iommu, strict) unless IOMMU=off.
IOMMU=on
# A 64 MiB aperture segment unless a configuration says otherwise: small
# enough that tests reach aperture pressure quickly.
GART_PAGES=16384
# shellcheck source=/dev/null
. "$conf"
IGT=${VMGPU_IGT:-$IGT}

# QEMU option values escape commas by doubling them.
device="vmgpu,id=vmgpu0,segments=${SEGMENTS//,/,,},bar-size=$BAR_SIZE,rebar=$REBAR"
device+=",host-aperture-size=$HOST_APERTURE,gart-pages=$GART_PAGES"
device+=",noncoherent=$NONCOHERENT,paging-va-mb=$PAGING_VA_MB,heads=$HEADS"
bus_args=()
if [ "$BUS" = root-port ]; then
	port=pcie-root-port,id=rp0,chassis=1,slot=1
	[ -z "$ROOT_PORT_RESERVE" ] || port+=",pref64-reserve=$ROOT_PORT_RESERVE"
	bus_args=(-device "$port")
	device+=",bus=rp0"
fi

# The debug kernel (scripts/build-debug.sh) or Debian's.
images="$VMGPU_OUT"
[ "$KERNEL" = stock ] || images="$VMGPU_OUT/$KERNEL"

iommu_args=()
# no_timer_check: under a loaded host, TCG can miss the kernel's IO-APIC
# timer probe window and the boot panics; the timer itself works.
# sysrq_always_enabled: at the boot timeout, qmp-dump.py asks the guest
# for its tasks' stacks (SysRq-T).
cmdline="console=ttyS0 loglevel=7 panic=-1 no_timer_check sysrq_always_enabled"
if [ "$IOMMU" = on ]; then
	iommu_args=(-device intel-iommu,intremap=on,caching-mode=on)
	cmdline+=" intel_iommu=on iommu.passthrough=0 iommu.strict=1"
fi
cmdline+=" VMGPU_MODE=$mode VMGPU_CONFIG=$config VMGPU_SEGMENTS=$SEGMENTS"
cmdline+=" VMGPU_BAR_SIZE=$BAR_SIZE VMGPU_REBAR=$REBAR VMGPU_BAR_EXPECT=$BAR_EXPECT"
cmdline+=" VMGPU_HOST_APERTURE=$HOST_APERTURE VMGPU_KERNEL=$KERNEL VMGPU_NONCOHERENT=$NONCOHERENT"
cmdline+=" VMGPU_IOMMU=$IOMMU VMGPU_PAGING_VA_MB=$PAGING_VA_MB VMGPU_HEADS=$HEADS"
[ -z "$IGT" ] || cmdline+=" VMGPU_IGT=$IGT"
[ -z "$SKIP_TESTS" ] || cmdline+=" VMGPU_SKIP_TESTS=${SKIP_TESTS// /,}"
# For a developer's quick loop: only these test programs (space separated).
[ -z "${VMGPU_ONLY_TESTS:-}" ] || cmdline+=" VMGPU_ONLY_TESTS=${VMGPU_ONLY_TESTS// /,}"
# Each slab cache on its own, so that fault injection can pick caches.
[ "$KERNEL" = stock ] || cmdline+=" slab_nomerge"

# make bench compares vmgpu's display with QEMU's bochs-display and
# virtio-gpu-pci at their defaults (vmgpu-bench-display).
display_args=()
[ "$mode" != bench ] || display_args=(-device bochs-display -device virtio-gpu-pci)
# vmgpu-bench times register reads through BAR 0's sysfs resource file,
# which the kernel refuses for a region a driver claimed unless relaxed.
[ "$mode" != bench ] || cmdline+=" iomem=relaxed"

# The guest's ttyS1: the host agent's answers (scripts/vmgpu_host_agent.py).
answer=$(mktemp -u "${TMPDIR:-/tmp}/vmgpu-answer.XXXXXX")
qemu=(
	"${VMGPU_QEMU:-$VMGPU_OUT/qemu-system-x86_64}" -L /usr/share/seabios -L /usr/share/qemu
	-machine q35,kernel-irqchip=split -accel tcg -cpu max -smp 2 -m 2G
	-nodefaults -display none -no-reboot
	"${iommu_args[@]}" "${bus_args[@]}" -device "$device" "${display_args[@]}"
	-kernel "$images/vmlinuz" -initrd "$images/initramfs.cpio.gz"
	-append "$cmdline"
	-chardev "socket,id=answer,path=$answer,server=on,wait=off"
)

case "$mode" in
shell)
	exec "${qemu[@]}" -serial mon:stdio -serial chardev:answer
	;;
*)
	[ -n "$logfile" ] || logfile=/dev/stdout
	# At the boot timeout, dump QEMU's view (halted vCPUs? pending
	# interrupts?) into the log before the kill: a hang must say something.
	qmp=$(mktemp -u "${TMPDIR:-/tmp}/vmgpu-qmp.XXXXXX")
	# Appending, like qmp-dump.py, so that neither overwrites the other.
	[ "$logfile" = /dev/stdout ] || : >"$logfile"
	"${qemu[@]}" -serial stdio -serial chardev:answer -qmp "unix:$qmp,server=on,wait=off" \
		</dev/null >>"$logfile" 2>&1 &
	pid=$!
	# Guest tests that need the host (screendumps, hotplug) ask it on the
	# serial console; the verdicts go to a host test log next to this one.
	agent=
	if [ "$logfile" != /dev/stdout ]; then
		python3 "$VMGPU_ROOT/scripts/vmgpu_host_agent.py" "$qmp" "$logfile" \
			"${logfile%.log}-host.log" "$pid" "$answer" &
		agent=$!
	fi
	(
		trap 'kill "$nap" 2>/dev/null; exit 0' TERM
		sleep "${VMGPU_BOOT_TIMEOUT:-900}" &
		nap=$!
		wait "$nap"
		kill -0 "$pid" 2>/dev/null || exit 0
		python3 "$VMGPU_ROOT/scripts/qmp-dump.py" "$qmp" >>"$logfile" 2>&1
		# QEMU's own threads: a main loop or vCPU thread stuck on a lock
		# (then QMP does not answer either) shows here.
		if command -v gdb >/dev/null; then
			timeout 120 gdb -p "$pid" -batch -nx -ex "thread apply all bt" </dev/null 2>&1 |
				sed 's/^/vmgpu-hang: /' >>"$logfile"
		else
			echo "vmgpu-hang: no gdb, so no stacks of QEMU's threads" >>"$logfile"
		fi
		kill "$pid"
	) &
	watchdog=$!
	rc=0
	wait "$pid" || rc=$?
	kill "$watchdog" 2>/dev/null
	wait "$watchdog" 2>/dev/null
	[ -z "$agent" ] || wait "$agent"
	rm -f "$qmp" "$answer"
	exit "$rc"
	;;
esac
