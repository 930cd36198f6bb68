#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The host's side of guest tests that need the host: run-guest.sh starts
it next to every test-mode guest.

A guest test asks by printing a line on the serial console:
  vmgpu-host: screendump head=H key=K width=W height=H
      QMP screendump of that head of the vmgpu device (id vmgpu0); the
      picture must be W x H and equal, pixel for pixel, the pattern the
      guest drew (pattern() below, the same formula as the guest's).
      The verdict is a test result here, on the host.
  vmgpu-host: connect head=H value=0|1
      qom-set vmgpu0 headH-connected: a hotplug the guest then waits for.
  vmgpu-host: screenshot head=H
      QMP screendump of that head as a PNG next to the serial log
      (out/run.log: out/run-head0.png), for people to look at.
Each request served is answered on the guest's second serial port
(ttyS1, a socket here): "done NAME" or "fail NAME", so that the guest
knows when the host has looked.

Results go to OUT as a host test log (report.py --host): one KTAP line
per screendump, inside "vmgpu-test: begin/end host_display test".
usage: vmgpu_host_agent.py QMP_SOCKET SERIAL_LOG OUT QEMU_PID ANSWER_SOCKET
"""
import os
import re
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from vmgpu_qmp import Qmp  # noqa: E402

REQUEST = re.compile(r"vmgpu-host: (\w+)((?: \w+=\d+)*)\s*$")


def pattern(x, y, key):
    """Pixel (x, y) of the guest's picture keyed by key, as 0xRRGGBB."""
    return (x * 7 + y * 131 + key * 977) & 0xffffff


def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    fields = data.split(maxsplit=4)
    if fields[0] != b"P6" or fields[3] != b"255":
        raise ValueError("not an 8-bit binary PPM")
    return int(fields[1]), int(fields[2]), fields[4]


def compare(path, key, width, height):
    """None if the picture is the pattern, else what differs."""
    w, h, rgb = read_ppm(path)
    if (w, h) != (width, height):
        return f"picture is {w}x{h}, the guest showed {width}x{height}"
    bad, first = 0, None
    for y in range(h):
        row = rgb[y * w * 3:(y + 1) * w * 3]
        for x in range(w):
            want = pattern(x, y, key)
            got = row[x * 3] << 16 | row[x * 3 + 1] << 8 | row[x * 3 + 2]
            if got != want:
                bad += 1
                first = first or (x, y, got, want)
    if bad:
        x, y, got, want = first
        return f"{bad} pixels differ, first at {x},{y}: 0x{got:06x} not 0x{want:06x}"
    return None


class Agent:
    def __init__(self, qmp_path, out_path, serial_path, answer_path):
        self.qmp_path = qmp_path
        self.out = open(out_path, "w")
        self.base = os.path.splitext(serial_path)[0]
        self.answer_path = answer_path
        self.answer = None
        self.tests = 0

    def reply(self, ok, request):
        if not self.answer:
            self.answer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.answer.connect(self.answer_path)
        self.answer.sendall(f"{'done' if ok else 'fail'} {request}\n".encode())

    def result(self, ok, name, detail=None):
        if not self.tests:
            self.out.write("vmgpu-test: begin host_display test\n")
        self.tests += 1
        self.out.write(f"{'ok' if ok else 'not ok'} {self.tests} {name}\n")
        if detail:
            self.out.write(f"# {detail}\n")
        self.out.flush()

    def qmp(self, command, **args):
        # One connection per request: the hang dump needs the socket too.
        qmp = Qmp(self.qmp_path)
        try:
            return qmp.call(command, **args)
        finally:
            qmp.close()

    def screendump(self, head, path, fmt):
        reply = self.qmp("screendump", filename=path, device="vmgpu0", head=head, format=fmt)
        if "error" in reply:
            raise ValueError(reply["error"].get("desc", reply["error"]))

    def serve(self, request, args):
        """Whether the request was carried out."""
        head = args["head"]
        if request == "screendump":
            path = f"{self.base}-screen.ppm"
            try:
                self.screendump(head, path, "ppm")
                detail = compare(path, args["key"], args["width"], args["height"])
            except (OSError, ValueError, IndexError) as e:
                detail = f"no picture: {e}"
            self.result(detail is None, f"screendump_of_head_{head}_is_the_guest_framebuffer",
                        detail)
            if detail is None:
                os.unlink(path)
            return True
        if request == "screenshot":
            path = f"{self.base}-head{head}.png"
            self.screendump(head, path, "png")
            print(f"vmgpu: head {head} of the guest display is in {path}", file=sys.stderr)
            return True
        if request == "connect":
            reply = self.qmp("qom-set", path="vmgpu0",
                             property=f"head{head}-connected", value=bool(args["value"]))
            if "error" in reply:
                self.result(False, f"connect_head_{head}", str(reply["error"]))
                return False
            return True
        return False

    def close(self):
        if self.answer:
            self.answer.close()
        if self.tests:
            self.out.write("vmgpu-test: end host_display test rc=0\n")
        self.out.close()


def running(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def main(qmp_path, log_path, out_path, pid, answer_path):
    agent = Agent(qmp_path, out_path, log_path, answer_path)
    while not os.path.exists(log_path) and running(pid):
        time.sleep(0.1)
    pending = ""
    with open(log_path, errors="replace") as log:
        while True:
            chunk = log.read()
            if not chunk:
                if not running(pid):
                    break
                time.sleep(0.1)
                continue
            pending += chunk
            *lines, pending = pending.split("\n")
            for line in lines:
                m = REQUEST.search(line.rstrip("\r"))
                if not m:
                    continue
                args = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(2))}
                request = m.group(0)[len("vmgpu-host: "):].strip()
                try:
                    ok = agent.serve(m.group(1), args)
                except (OSError, EOFError, KeyError, ValueError) as e:
                    agent.result(False, f"request_{m.group(1)}", f"{request}: {e}")
                    ok = False
                try:
                    agent.reply(ok, request)
                except OSError as e:
                    agent.result(False, "answer_the_guest", f"{request}: {e}")
    agent.close()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]))
