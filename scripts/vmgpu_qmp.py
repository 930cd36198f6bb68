# SPDX-License-Identifier: MIT
"""A minimal QMP client over a UNIX socket, for run-guest.sh's hang dump
(qmp-dump.py) and the device tests."""
import json
import socket
import time


class Qmp:
    def __init__(self, path, timeout=10):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock.connect(path)
                break
            except (FileNotFoundError, ConnectionRefusedError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
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
        """The reply to command: {"return": ...} or {"error": ...}; events
        in between are dropped."""
        self.sock.sendall(json.dumps({"execute": command,
                                      "arguments": arguments}).encode() + b"\n")
        while True:
            reply = self.read()
            if "return" in reply or "error" in reply:
                return reply

    def close(self):
        self.sock.close()
