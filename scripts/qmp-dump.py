#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Dump what a guest that ran out of time was doing, over QEMU's QMP socket.

run-guest.sh calls this before it kills a guest at its boot timeout, so
that a hang leaves more in the log than silence: whether the VM runs,
where each vCPU is and whether it is halted, and the interrupt
controllers' state (a lost interrupt or wake-up is the first suspect).
Every line is prefixed with "vmgpu-hang: ". usage: qmp-dump.py SOCKET
"""
import json
import socket
import sys

HMP_COMMANDS = ("info status", "info cpus", "info registers -a", "info lapic 0",
                "info lapic 1", "info pic", "info irq")


class Qmp:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(path)
        self.buf = b""
        self.read()  # the greeting
        self.call("qmp_capabilities")

    def read(self):
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise EOFError("QMP socket closed")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def call(self, command, **arguments):
        self.sock.sendall(json.dumps({"execute": command,
                                      "arguments": arguments}).encode() + b"\n")
        while True:
            reply = self.read()
            if "return" in reply or "error" in reply:
                return reply


def main(path):
    try:
        qmp = Qmp(path)
    except (OSError, EOFError, ValueError) as e:
        print(f"vmgpu-hang: no QMP on {path}: {e}")
        return 1
    print("vmgpu-hang: the guest ran out of time; QEMU's state follows")
    for command in HMP_COMMANDS:
        reply = qmp.call("human-monitor-command", **{"command-line": command})
        text = reply.get("return", reply.get("error"))
        print(f"vmgpu-hang: ({command})")
        for line in str(text).splitlines():
            print(f"vmgpu-hang:   {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
