#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Dump what a guest that ran out of time was doing, over QEMU's QMP socket.

run-guest.sh calls this before it kills a guest at its boot timeout, so
that a hang leaves more in the log than silence. First the guest kernel's
own view: SysRq-T on the emulated keyboard (the guest boots with
sysrq_always_enabled) prints every task's state and stack on the console,
where a task asleep on a fence or a lock shows what it waits for. Then
QEMU's: whether the VM runs, where each vCPU is and whether it is halted,
and the interrupt controllers' state. Every line of QEMU's is prefixed
with "vmgpu-hang: ". usage: qmp-dump.py SOCKET
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from vmgpu_qmp import Qmp  # noqa: E402

HMP_COMMANDS = ("info status", "info cpus", "info registers -a", "info lapic 0",
                "info lapic 1", "info pic", "info irq")


def main(path):
    try:
        qmp = Qmp(path)
    except (OSError, EOFError, ValueError) as e:
        print(f"vmgpu-hang: no QMP on {path}: {e}")
        return 1
    print("vmgpu-hang: the guest ran out of time; its tasks (SysRq-T) follow")
    sys.stdout.flush()
    try:
        qmp.call("human-monitor-command", **{"command-line": "sendkey alt-sysrq-t"})
    except (OSError, EOFError) as e:
        print(f"vmgpu-hang: no answer to sendkey: {e}")
        return 1
    # The guest prints on the serial console at its own pace.
    time.sleep(10)
    print("vmgpu-hang: QEMU's state follows")
    for command in HMP_COMMANDS:
        try:
            reply = qmp.call("human-monitor-command", **{"command-line": command})
        except (OSError, EOFError) as e:
            # QMP is served by the main loop: no answer means it is stuck,
            # and its thread's stack (run-guest.sh's gdb dump) says where.
            print(f"vmgpu-hang: no answer to {command}: {e}")
            return 1
        text = reply.get("return", reply.get("error"))
        print(f"vmgpu-hang: ({command})")
        for line in str(text).splitlines():
            print(f"vmgpu-hang:   {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
