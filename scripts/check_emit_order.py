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
list), and so are two operands of one expression that both emit with no
sequence point between them (f(b) + g(b); not x ? f(b) : g(b), nor
f(b), g(b)). Comments and string literals are skipped.

Usage: scripts/check_emit_order.py [FILE...]   (default: ir/**/*.c ir/**/*.h
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


SEQUENCED = {",", ";", "?", ":", "&&", "||", "{", "}"}
CONTROL = {"if", "while", "for", "switch", "sizeof"}


def operand_pairs(toks, lo, hi):
    """lines where two operands of one expression in toks[lo:hi] (its top
    level, outside nested brackets) both emit ops with no sequence point
    (, ; ? : && ||) between them: f(b) + g(b)"""
    lines, seen, j = [], False, lo
    while j < hi:
        t = toks[j][1]
        if t == "{":  # a block or a list: checked on its own
            seen = False
            j = match(toks, j) + 1
            continue
        if t in SEQUENCED or (t in ("&", "|") and j + 1 < hi and toks[j + 1][1] == t):
            seen = False
            j += 2 if t in ("&", "|") else 1
            continue
        if t in "([":
            end = match(toks, j)
            head = toks[j - 1] if j > lo else ("", "", 0)
            if head[1] in CONTROL:
                seen = False  # a condition is sequenced before what follows
            elif emits(toks, j - 1 if head[0] == "id" else j, end + 1):
                if seen:
                    lines.append(toks[j][2])
                seen = True
            j = end + 1
            continue
        j += 1
    return lines


def check(path, shown):
    with open(path, encoding="utf-8") as f:
        toks = tokens(f.read())
    found = ["%s:%d: two operands emit ops (order unspecified)" % (shown, line)
             for line in operand_pairs(toks, 0, len(toks))]
    for i, (kind, text, line) in enumerate(toks):
        if text in "([{":
            end = match(toks, i)
            for lo, hi in split_args(toks, i + 1, end):
                found += ["%s:%d: two operands emit ops (order unspecified)" % (shown, ln)
                          for ln in operand_pairs(toks, lo, hi)]
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
    files = argv[1:] or sorted(glob.glob(os.path.join(root, "ir", "**", "*.[ch]"), recursive=True) +
                               glob.glob(os.path.join(root, "runtime", "*.c")))
    found = []
    for path in files:
        rel = os.path.relpath(os.path.abspath(path), root)
        found += check(path, path if rel.startswith("..") else rel)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
