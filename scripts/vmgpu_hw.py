# SPDX-License-Identifier: MIT
"""The constants of include/hw/vmgpu_hw.h, for host-side tools and tests.

Reads the header itself, so that the C header stays the single source of
truth. Function-like macros are evaluated at index 0 and stored as NAME0
(VMGPU_REG_RING(i) gives VMGPU_REG_RING0).
"""
import os
import re

HEADER = os.path.join(os.path.dirname(__file__), "..", "include", "hw", "vmgpu_hw.h")


def _evaluate(expr, known):
    expr = re.sub(r"/\*.*?\*/", "", expr).strip()
    expr = re.sub(r"\b(0x[0-9a-fA-F]+|\d+)(ull|ULL|u|U)\b", r"\1", expr)
    expr = re.sub(r"\(\s*(uint\d+_t|unsigned)\s*\)", "", expr)
    expr = expr.replace("~", "~")
    return eval(expr, {"__builtins__": {}}, dict(known))


def load():
    known = {}
    with open(HEADER) as f:
        text = f.read()
    # Plain and function-like macros use each other: plain ones on both sides.
    for pattern in (r"^#define\s+(\w+)\s+(.+)$", r"^#define\s+(\w+)\((\w+)\)\s+(.+)$",
                    r"^#define\s+(\w+)\s+(.+)$"):
        for m in re.finditer(pattern, text, re.M):
            try:
                if m.lastindex == 3:
                    known[m.group(1) + "0"] = _evaluate(m.group(3).replace(m.group(2), "0"),
                                                        known)
                else:
                    known[m.group(1)] = _evaluate(m.group(2), known)
            except Exception:
                pass
    for body in re.findall(r"enum\s+\w+\s*\{(.*?)\};", text, re.S):
        for m in re.finditer(r"(\w+)\s*=\s*([^,]+),", body):
            known[m.group(1)] = _evaluate(m.group(2), known)
    return known


HW = load()
