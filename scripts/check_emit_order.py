#!/usr/bin/env python3
"""check_emit_order.py - find op-emitting calls whose order C leaves unspecified.

C does not say in which order a call's arguments (or a compound literal's
initializers) are evaluated, and gcc and clang pick differently. When two
arguments of one call both emit ops through the gradient builder, the ops'
order and var numbering (so the generated C) depend on the compiler that
built dy2stc. This script reports every such call or initializer list.

An "emitting call" is a call of a dy_gb_* function (but dy_gb_status and
dy_gb_fail, which emit nothing), of any function whose first argument is
the builder `b` or `&b` (the rule files' local helpers, dy_loss_build, ...)
or of the builder's own emit and constant members; `b->type(b, v)` only
reads. A call or brace list with two or more emitting arguments
is reported (a brace pair holding a top-level ';' is a block, not a
list). Comments and string literals are skipped.

Usage: scripts/check_emit_order.py [FILE...]   (default: ir/*.c ir/*.h
runtime/*.c). Exit status 1 when something is reported."""

import glob
import os
import re
import sys

READ_ONLY = {"dy_gb_status", "dy_gb_fail"}
TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<str>"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*')
  | (?P<pre>^[ \t]*\#[^\n]*(?:\\\n[^\n]*)*)
  | (?P<id>[A-Za-z_]\w*)
  | (?P<num>\d[\w.]*)
  | (?P<op>->|.)
""", re.X | re.S | re.M)


def tokens(text):
    out = []
    line = 1
    for m in TOKEN.finditer(text):
        kind = m.lastgroup
        if kind not in ("ws", "comment", "str", "pre"):
            out.append((kind, m.group(), line))
        elif kind == "str":
            out.append(("str", '""', line))
        line += m.group().count("\n")
    return out


def match(toks, i):
    """index of the bracket closing toks[i]"""
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack = []
    for j in range(i, len(toks)):
        t = toks[j][1]
        if t in pairs:
            stack.append(pairs[t])
        elif stack and t == stack[-1]:
            stack.pop()
            if not stack:
                return j
    return len(toks) - 1


def top_level(toks, lo, hi):
    """indices in [lo, hi) outside nested brackets"""
    depth = 0
    for j in range(lo, hi):
        t = toks[j][1]
        if t in ")]}":
            depth -= 1
        if depth == 0:
            yield j
        if t in "([{":
            depth += 1


def split_args(toks, lo, hi):
    """top-level comma-separated ranges of toks[lo:hi]"""
    args, depth, start = [], 0, lo
    for j in range(lo, hi):
        t = toks[j][1]
        if t in "([{":
            depth += 1
        elif t in ")]}":
            depth -= 1
        elif t == "," and depth == 0:
            args.append((start, j))
            start = j + 1
    if start < hi:
        args.append((start, hi))
    return args


def is_emitting_call(toks, j):
    """toks[j] is an identifier followed by '(': does that call emit ops?"""
    name = toks[j][1]
    if j > 0 and toks[j - 1][1] in ("->", "."):
        return name in ("emit", "constant")
    if name in READ_ONLY:
        return False
    if name.startswith("dy_gb_"):
        return True
    k = j + 2
    if k < len(toks) and toks[k][1] == "&":
        k += 1
    return k + 1 < len(toks) and toks[k][1] == "b" and toks[k + 1][1] in (",", ")")


def emits(toks, lo, hi):
    for j in range(lo, hi - 1):
        if toks[j][0] == "id" and toks[j + 1][1] == "(" and is_emitting_call(toks, j):
            return True
    return False


def check(path, shown):
    with open(path, encoding="utf-8") as f:
        toks = tokens(f.read())
    found = []
    for i, (kind, text, line) in enumerate(toks):
        call = text == "(" and i > 0 and toks[i - 1][0] == "id"
        if not (call or text == "{"):
            continue
        end = match(toks, i)
        if not call and any(toks[j][1] == ";" for j in top_level(toks, i + 1, end)):
            continue  # a block, not an initializer list
        args = split_args(toks, i + 1, end)
        n = sum(1 for lo, hi in args if emits(toks, lo, hi))
        if n >= 2:
            what = toks[i - 1][1] + "(...)" if call else "{...}"
            found.append("%s:%d: %d arguments of %s emit ops (order unspecified)"
                         % (shown, line, n, what))
    return found


def main(argv):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    files = argv[1:] or sorted(glob.glob(os.path.join(root, "ir", "*.[ch]")) +
                               glob.glob(os.path.join(root, "runtime", "*.c")))
    found = []
    for path in files:
        found += check(path, os.path.relpath(path, root) if os.path.isabs(path) else path)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
