#!/bin/bash
# SPDX-License-Identifier: MIT
#
# The DKMS package on this host, as a user would install it: dpkg installs
# out/deb's vmgpu-dkms (make deb), dkms builds vmgpu.ko for the guest's
# Debian 6.12 kernel against its installed headers, modinfo checks what
# was built, and removing the package removes the module. KTAP lines
# between vmgpu-test markers, for scripts/report.py. Needs root.
set -uo pipefail

. "$(dirname "$0")/common.sh"

kver=$(resolve_kernel_version)
n=0
failed=0

result() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n dkms.$2"
	else
		echo "not ok $n dkms.$2${3:+ # $3}"
		failed=1
	fi
}

echo "vmgpu-test: begin test vmgpu_dkms_test"
echo "TAP version 13"
echo "1..6"
# Never touch packages someone installed for real; needs root for dpkg.
installed=$(dpkg-query -W -f '${Package} ${Status}\n' vmgpu-dkms vmgpu-tools libvmgpu-dev 2>/dev/null |
	grep -c " installed$")
skip=
[ "$(id -u)" = 0 ] || skip="dpkg -i needs root"
[ "$installed" = 0 ] || skip="vmgpu packages already installed on this host"
if [ -n "$skip" ]; then
	for t in package_has_dkms_conf package_installs_and_adds_the_module \
		 dkms_builds_for_the_guest_kernel module_is_for_the_kernel removed_with_the_package \
		 tools_package_builds_a_program; do
		n=$((n + 1))
		echo "ok $n dkms.$t # SKIP $skip"
	done
	echo "vmgpu-test: end test vmgpu_dkms_test rc=0"
	exit 0
fi
deb=$(ls -t "$VMGPU_OUT"/deb/vmgpu-dkms_*_all.deb 2>/dev/null | head -1)
version=${deb:+$(dpkg-deb -f "$deb" Version)}
[ -n "$deb" ] && dpkg-deb -c "$deb" | grep "usr/src/vmgpu-$version/dkms.conf" >/dev/null
result $? package_has_dkms_conf "no package in $VMGPU_OUT/deb (make deb)"

# Whatever happens, the host is left as it was found.
trap 'dpkg -r vmgpu-dkms vmgpu-tools libvmgpu-dev >/dev/null 2>&1' EXIT
dpkg -i "$deb" >/dev/null 2>&1 && dkms status -m vmgpu -v "$version" | grep . >/dev/null
result $? package_installs_and_adds_the_module

dkms install -m vmgpu -v "$version" -k "$kver" >"$VMGPU_OUT/deb/dkms-build.log" 2>&1
result $? dkms_builds_for_the_guest_kernel "see $VMGPU_OUT/deb/dkms-build.log"

file=$(modinfo -k "$kver" -F filename vmgpu 2>/dev/null)
vermagic=$(modinfo -k "$kver" -F vermagic vmgpu 2>/dev/null)
[[ "$file" == */updates/dkms/vmgpu.ko* && "$vermagic" == "$kver "* ]] &&
	modinfo -k "$kver" -F alias vmgpu | grep '^pci:v00001AF4d000010F7' >/dev/null
result $? module_is_for_the_kernel "filename '$file', vermagic '$vermagic'"

dpkg -r vmgpu-dkms >/dev/null 2>&1
file=$(modinfo -k "$kver" -F filename vmgpu 2>/dev/null)
[[ "$file" != */updates/dkms/* ]] && ! dkms status -m vmgpu 2>/dev/null | grep . >/dev/null
result $? removed_with_the_package "still '$file'"

# vmgpu-tools and libvmgpu-dev: a program built against libvmgpu through
# pkg-config, and vmgpu-top refusing an unknown option with status 2 (so
# it ran).
tools=$(ls -t "$VMGPU_OUT"/deb/vmgpu-tools_*_amd64.deb 2>/dev/null | head -1)
prog=$(mktemp -d)
printf '#include <libvmgpu.h>\n\nint main(void)\n{\n\tvmgpu_device *dev;\n\n\treturn vmgpu_device_open(&dev) == 0;\n}\n' \
	>"$prog/probe.c"
dev=$(ls -t "$VMGPU_OUT"/deb/libvmgpu-dev_*.deb 2>/dev/null | head -1)
status=1
if [ -n "$tools" ] && [ -n "$dev" ] && dpkg -i "$tools" "$dev" >/dev/null 2>&1 &&
	cc -o "$prog/probe" "$prog/probe.c" $(pkg-config --cflags --libs libvmgpu); then
	vmgpu-top --bogus 2>/dev/null
	status=$?
fi
dpkg -r vmgpu-tools libvmgpu-dev >/dev/null 2>&1
rm -rf "$prog"
[ "$status" = 2 ] && [ ! -e /usr/bin/vmgpu-top ]
result $? tools_package_builds_a_program "vmgpu-top status $status"
echo "vmgpu-test: end test vmgpu_dkms_test rc=$failed"
exit $failed
