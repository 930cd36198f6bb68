# SPDX-License-Identifier: MIT
# Shared settings for the vmgpu scripts; sourced, not run.

VMGPU_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VMGPU_CACHE=${VMGPU_CACHE:-$HOME/.cache/vmgpu}
VMGPU_OUT=${VMGPU_OUT:-$VMGPU_ROOT/out}

log() {
	echo "vmgpu: $*" >&2
}

die() {
	log "error: $*"
	exit 1
}

# The kernel ABI version (e.g. 6.12.57+deb12-amd64) that the
# linux-image-6.12-amd64 metapackage currently depends on. Asked of apt
# every time (it is a local lookup), since old versions vanish from the mirror.
resolve_kernel_version() {
	local v

	if [ -n "${VMGPU_KVER:-}" ]; then
		echo "$VMGPU_KVER"
		return
	fi
	v=$(apt-cache depends linux-image-6.12-amd64 2>/dev/null |
		sed -n 's/.*Depends: linux-image-\(6\.12\.[^ ]*-amd64\)$/\1/p' | head -n 1)
	[ -n "$v" ] || die "apt knows no linux-image-6.12-amd64 (is bookworm-security configured?)"
	echo "$v"
}
