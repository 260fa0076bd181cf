#!/usr/bin/env python3
"""check_attr_writes.py - no attribute name written as a string outside ir's table.

Every op's attributes are declared once, in ir/ops*.def, and ir/dy_ir.h
generates from those lists a typed struct per op (dy_<op>_attrs), its
readers (dy_<op>_attrs_of / _get) and its writer:

    dy_attr a[DY_CONV2D_NATTRS];
    int n = dy_conv2d_attrs_put(&(dy_conv2d_attrs){.given = DY_GIVEN_ALL,
                                  .strides = s, .n_strides = 2, ...}, a);

so a name or kind that is not in the schema fails to compile. This script
finds the writes that bypass that, in the library code of ir/, runtime/,
codegen/ and compiler/ (tests may keep the string form where they test
the generic string path):

  - DY_ATTR_I / _F / _S / _IS / _FS whose name argument holds a string
    literal: DY_ATTR_I("axis", 1), DY_ATTR_F(w ? "coeff" : "x", v);
  - a dy_attr built with a literal name: (dy_attr){.name = "perm", ...} or
    dy_attr a = {.name = "perm", ...}.

Generic code that copies attributes by schema (names taken from the op
table or from an op) is not a write by name and is not reported. The
table files themselves (ir/dy_ir.h, ir/core/ops.c) are skipped.

Usage: scripts/check_attr_writes.py check SRC_ROOT
       scripts/check_attr_writes.py selftest
Exit status 1 when something is reported (selftest: when a planted write
is not)."""

import os
import re
import sys
import tempfile

FOLDERS = ("ir", "runtime", "codegen", "compiler")
TABLE_FILES = {os.path.join("ir", "dy_ir.h"), os.path.join("ir", "core", "ops.c")}
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
# DY_ATTR_X( ... first argument containing a string literal ... ,
MACRO = re.compile(r'\bDY_ATTR_(I|F|S|IS|FS)\(\s*([^,()\n"]*"(\w*)"[^,()\n]*),')
# a dy_attr brace initializer naming .name = "..."
LITERAL = re.compile(r'\bdy_attr\b\s*\)?\s*(?:\w+\s*(?:\[[^\]]*\])?\s*=\s*)?\{\s*'
                     r'[^;{}]*?\.name\s*=\s*"([^"\\]*)"')

ADVICE = ("use the op's typed writer, dy_<op>_attrs_put(&(dy_<op>_attrs){.given = "
          "DY_GIVEN_ALL or DY_GIVEN(<op>, <attr>) | ..., .<attr> = ...}, out) with "
          "dy_attr out[DY_<OP>_NATTRS] (ir/dy_ir.h, 'Writers')")


def blank_comments(text):
    """comments replaced by spaces, newlines kept (so line numbers hold)"""
    return COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)


def scan_text(rel, text):
    text = blank_comments(text)
    out = []
    for m in MACRO.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        out.append("%s:%d: attribute '%s' written by name (DY_ATTR_%s(%s, ...)); %s"
                   % (rel, line, m.group(3), m.group(1), m.group(2).strip(), ADVICE))
    for m in LITERAL.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        out.append("%s:%d: attribute '%s' written by name (a dy_attr with .name = \"%s\"); %s"
                   % (rel, line, m.group(1), m.group(1), ADVICE))
    return out


def scan(root):
    found = []
    n_files = 0
    for folder in FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames.sort()
            for f in sorted(filenames):
                if not f.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                if rel in TABLE_FILES:
                    continue
                n_files += 1
                with open(path, encoding="utf-8", errors="replace") as fh:
                    found += scan_text(rel, fh.read())
    return found, n_files


def check(root):
    found, n_files = scan(root)
    for f in found:
        print(f)
    if found:
        print("check_attr_writes: %d attribute write(s) by name in %d files read" %
              (len(found), n_files))
        return 1
    if n_files < 50:
        print("check_attr_writes: only %d files read under %s: wrong root?" % (n_files, root))
        return 1
    print("check_attr_writes: no attribute written by name (%d files read)" % n_files)
    return 0


PLANTS = {
    "DY_ATTR_I": 'dy_attr a[] = {DY_ATTR_I("axis", 1)};',
    "DY_ATTR_IS": '  at[n++] = DY_ATTR_IS("strides", s, 2);',
    "ternary": 'dy_attr a = DY_ATTR_F(w ? "coeff" : "weight_decay", v);',
    "literal": '*attrs = (dy_attr){.name = "perm", .kind = DY_ATTR_INTS, .n = 2};',
    "init": 'dy_attr a = {.name = "shape", .kind = DY_ATTR_INTS};',
}
CLEAN = [
    '/* DY_ATTR_I("axis", 1) in a comment */',
    'dy_attr a = info->attrs[0].dflt;',
    'a[na] = DY_ATTR_F(e->name, v);',
    'o.name = "model";',
    'dy_compile_options o = {.name = "model"};',
    'n = dy_conv2d_attrs_put(&(dy_conv2d_attrs){.given = DY_GIVEN_ALL, .groups = 1}, a);',
]


def selftest():
    """each plant, alone in a file of a fake tree, must be reported at its
    line; the clean lines must not be"""
    bad = 0
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "compiler", "passes"))
        for i in range(60):  # enough files for the root check
            open(os.path.join(root, "compiler", "f%02d.c" % i), "w").close()
        plant = os.path.join(root, "compiler", "passes", "plant.c")
        for name, code in PLANTS.items():
            with open(plant, "w") as fh:
                fh.write("int x;\n\n" + code + "\n")
            found, _ = scan(root)
            if len(found) != 1 or "compiler/passes/plant.c:3:" not in found[0]:
                print("selftest: plant %s not reported once at line 3: %s" % (name, found))
                bad = 1
        with open(plant, "w") as fh:
            fh.write("\n".join(CLEAN) + "\n")
        found, _ = scan(root)
        if found:
            print("selftest: clean code reported: %s" % found)
            bad = 1
    print("check_attr_writes selftest: %s" % ("FAILED" if bad else "every plant reported"))
    return bad


def main(argv):
    if len(argv) == 3 and argv[1] == "check":
        return check(argv[2])
    if len(argv) == 2 and argv[1] == "selftest":
        return selftest()
    print(__doc__.split("\n\n")[-1].split("Exit")[0].strip())
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
