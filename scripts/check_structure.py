#!/usr/bin/env python3
"""check_structure.py: the house rules a reader can rely on, checked.

    check_structure.py sizes SRC_ROOT
        No source file of ir/, runtime/, codegen/, compiler/ over MAX_FILE
        lines, no function over MAX_FUNC lines (.def and .proto files and
        tests/ aside). A function is counted from the first line of its
        signature to its closing brace.

    check_structure.py circles SRC_ROOT OBJECT...
        No call circle between the object files of one folder: for the
        objects given (each compiled from SRC_ROOT/<folder>/<file>.c), the
        graph "a.o uses a global symbol that b.o defines" restricted to
        objects of one source folder must have no cycle. Reads the symbols
        with nm (NM in the environment, else `nm`). Objects whose source is
        not under SRC_ROOT (generated files) are skipped. The folders
        themselves must use each other without a cycle too. Each cycle
        found is printed with the symbols that close it.

    check_structure.py selftest CC
        Plants a breach of each rule in a temporary tree (a 1,001-line file,
        a 151-line function, two objects calling each other, two folders
        using each other, compiled with CC) and passes only when each check
        fails on its breach and passes on the same tree without it.

Options before the command: --only A,B reports only breaches in folders
starting with A or B (to see one's own part while others are unfinished).

Exit status 0 when the rule holds, 1 with one line per breach, 2 on bad
usage. tests/CMakeLists.txt runs all three (ctest structure_sizes,
structure_circles, structure_selftest).
"""
import os
import re
import subprocess
import sys

MAX_FILE = 1000
MAX_FUNC = 150
FOLDERS = ("ir", "runtime", "codegen", "compiler")
EXTS = (".c", ".h")


def strip_c(text):
    """Comments, string and char literals blanked out, newlines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == "\\":
                    j += 1
                if j < n and text[j] == "\n":
                    break
                j += 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first line, last line) of each function definition."""
    s = strip_c(text)
    # preprocessor lines out (a macro body is not a function)
    lines = s.split("\n")
    cleaned = []
    cont = False
    for ln in lines:
        if cont or ln.lstrip().startswith("#"):
            cont = ln.rstrip().endswith("\\")
            cleaned.append("")
        else:
            cleaned.append(ln)
    s = "\n".join(cleaned)
    res = []
    depth = 0
    decl_start = 0          # offset where the current top-level declaration began
    body_start = None
    name = None
    i = 0
    while i < len(s):
        c = s[i]
        if c == "{":
            if depth == 0:
                head = s[decl_start:i]
                h = head.strip()
                m = None
                if "(" in h and not re.match(r"(typedef|struct|union|enum)\b", h) and "=" not in h.split("(")[0]:
                    m = re.search(r"([A-Za-z_]\w*)\s*\([^()]*(\([^()]*\)[^()]*)*\)\s*$", h)
                if m:
                    name = m.group(1)
                    lead = len(head) - len(head.lstrip())
                    body_start = decl_start + lead
                else:
                    name = None
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if name:
                    first = s.count("\n", 0, body_start) + 1
                    last = s.count("\n", 0, i) + 1
                    res.append((name, first, last))
                name = None
                decl_start = i + 1
        elif c == ";" and depth == 0:
            decl_start = i + 1
        i += 1
    return res


def sources(root):
    for top in FOLDERS:
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(EXTS):
                    yield os.path.join(d, f)


def cmd_sizes(root):
    bad = []
    n_files = n_funcs = 0
    for path in sorted(sources(root)):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        n_files += 1
        nl = text.count("\n")
        if nl > MAX_FILE:
            bad.append(f"{rel}: {nl} lines (at most {MAX_FILE})")
        if path.endswith(".c") or path.endswith(".h"):
            for name, a, b in functions(text):
                n_funcs += 1
                if b - a + 1 > MAX_FUNC:
                    bad.append(f"{rel}:{a}: function {name} is {b - a + 1} lines (at most {MAX_FUNC})")
    if ONLY:
        bad = [b for b in bad if b.startswith(ONLY)]
    for b in bad:
        print(b)
    if not bad:
        print(f"sizes: {n_files} files, {n_funcs} functions, none over {MAX_FILE} / {MAX_FUNC} lines")
    return 1 if bad else 0


def nm_syms(nm, obj):
    out = subprocess.run([nm, obj], capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"check_structure: {nm} {obj} failed: {out.stderr.strip()}")
    defs, undef = set(), set()
    for ln in out.stdout.splitlines():
        parts = ln.split()
        if len(parts) == 2 and parts[0] == "U":
            undef.add(parts[1])
        elif len(parts) == 3 and parts[1] in "TDBRCVWGS" and parts[1].isupper():
            defs.add(parts[2])
    return defs, undef


def source_of(root, obj):
    """The source file an object was compiled from, or None (generated)."""
    p = os.path.abspath(obj)
    m = re.match(r"(.*)/CMakeFiles/[^/]+\.dir/(.*)\.o(bj)?$", p)
    if m:
        build_dir, rel = m.group(1), m.group(2)
        # build_dir is BUILD/<folder>: the longest tail of it that is a
        # folder of the source tree under one of FOLDERS
        parts = build_dir.strip("/").split("/")
        for k in range(len(parts)):
            if parts[k] in FOLDERS and os.path.isdir(os.path.join(root, *parts[k:])):
                src = os.path.join(root, *parts[k:], rel)
                return src if os.path.exists(src) else None
        return None
    # a plain object: name it by its file, look it up by the name given
    # through the PLANT_DIR convention (tests): <dir>/<folder>__<file>.o
    base = os.path.basename(p)
    m = re.match(r"(.+)__(.+)\.o$", base)
    if m:
        return os.path.join(root, m.group(1).replace("+", "/"), m.group(2) + ".c")
    return None


def sccs(nodes, edges):
    """Tarjan's strongly connected components (iterative)."""
    index, low, on, stack, res = {}, {}, set(), [], []
    counter = [0]
    for start in nodes:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    res.append(sorted(comp))
    return res


def cmd_circles(root, objs):
    nm = os.environ.get("NM") or "nm"
    info = {}
    for o in objs:
        src = source_of(root, o)
        if src is None:
            continue
        rel = os.path.relpath(src, root)
        info[rel] = nm_syms(nm, o)
    if not info:
        print("circles: no objects given")
        return 2
    definer = {}
    for rel, (defs, _) in info.items():
        for s in defs:
            definer.setdefault(s, rel)
    by_folder = {}
    for rel in info:
        by_folder.setdefault(os.path.dirname(rel), []).append(rel)
    bad = []
    for folder, files in sorted(by_folder.items()):
        fs = set(files)
        edges, why = {}, {}
        for f in files:
            for s in sorted(info[f][1]):
                d = definer.get(s)
                if d and d != f and d in fs:
                    edges.setdefault(f, set()).add(d)
                    why.setdefault((f, d), s)
        for comp in sccs(sorted(files), edges):
            cs = set(comp)
            links = [f"{os.path.basename(a)} -> {os.path.basename(b)} ({why[(a, b)]})"
                     for a in comp for b in sorted(edges.get(a, ())) if b in cs]
            bad.append(f"{folder}/: call circle between {', '.join(os.path.basename(c) for c in comp)}: "
                       + "; ".join(links))
    # between folders: a folder uses another when one of its files does
    fedges, fwhy = {}, {}
    for f, (_, und) in info.items():
        for s in sorted(und):
            d = definer.get(s)
            if d and os.path.dirname(d) != os.path.dirname(f):
                a, b = os.path.dirname(f), os.path.dirname(d)
                fedges.setdefault(a, set()).add(b)
                fwhy.setdefault((a, b), f"{f} uses {s} of {d}")
    for comp in sccs(sorted(by_folder), fedges):
        cs = set(comp)
        links = [fwhy[(a, b)] for a in comp for b in sorted(fedges.get(a, ())) if b in cs]
        bad.append(f"call circle between folders {', '.join(c + '/' for c in comp)}: " + "; ".join(links))
    if ONLY:
        bad = [b for b in bad if b.startswith(ONLY) or any(("folders " + o) in b for o in ONLY)]
    for b in bad:
        print(b)
    if not bad:
        print(f"circles: {len(info)} objects in {len(by_folder)} folders, no call circle inside a folder or between folders")
    return 1 if bad else 0


def selftest(cc):
    import tempfile
    fails = []
    with tempfile.TemporaryDirectory() as t:
        os.makedirs(os.path.join(t, "ir"))
        os.makedirs(os.path.join(t, "runtime"))
        def put(rel, text):
            with open(os.path.join(t, rel), "w") as fh:
                fh.write(text)
        # sizes: a long function and a long file
        body = "".join(f"  x += {i};\n" for i in range(147))
        put("ir/longfn.c", "int longfn(int x)\n{\n" + body + "  return x;\n}\n")   # 151 lines
        put("ir/longfile.c", "/* filler */\n" * 1001)
        put("ir/ok.c", "static int f(int x) { return x + 1; }\nint g(int x) {\n  return f(x);\n}\n")
        import io, contextlib
        def run(fn, *a):
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                rc = fn(*a)
            return rc, buf.getvalue()
        rc, out = run(cmd_sizes, t)
        if rc != 1 or "ir/longfn.c:1: function longfn is 151 lines" not in out or "ir/longfile.c: 1001 lines" not in out:
            fails.append("sizes did not report the planted long function and file:\n" + out)
        os.remove(os.path.join(t, "ir/longfn.c"))
        os.remove(os.path.join(t, "ir/longfile.c"))
        rc, out = run(cmd_sizes, t)
        if rc != 0:
            fails.append("sizes failed on a tree without breaches:\n" + out)
        # circles: objects named <folder>__<file>.o for source_of
        def obj(folder, name, text):
            put(f"{folder}/{name}.c", text)
            o = os.path.join(t, f"{folder}__{name}.o")
            r = subprocess.run([cc, "-c", "-o", o, os.path.join(t, folder, name + ".c")],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit("selftest: " + cc + " failed: " + r.stderr)
            return o
        a = obj("ir", "pa", "int pb(int);\nint pa(int x) { return x ? pb(x - 1) : 0; }\n")
        b = obj("ir", "pb", "int pa(int);\nint pb(int x) { return pa(x); }\n")
        c = obj("ir", "pc", "int pa(int);\nint pc(int x) { return pa(x); }\n")
        rc, out = run(cmd_circles, t, [a, b, c])
        if rc != 1 or "call circle between pa.c, pb.c" not in out or "pc.c" in out:
            fails.append("circles did not report exactly the planted pa.c <-> pb.c:\n" + out)
        b2 = obj("ir", "pb", "int pb(int x) { return x; }\n")
        rc, out = run(cmd_circles, t, [a, b2, c])
        if rc != 0:
            fails.append("circles failed on objects without a circle:\n" + out)
        r1 = obj("runtime", "ru", "int pc(int);\nint ru(int x) { return pc(x); }\n")
        i1 = obj("ir", "iu", "int ru(int);\nint iu(int x) { return ru(x); }\n")
        rc, out = run(cmd_circles, t, [a, b2, c, r1, i1])
        if rc != 1 or "call circle between folders ir/, runtime/" not in out:
            fails.append("circles did not report the planted ir/ <-> runtime/ circle:\n" + out)
    for f in fails:
        print("selftest: " + f)
    if not fails:
        print("selftest: each planted breach was reported, and nothing else")
    return 1 if fails else 0


ONLY = None


def main(argv):
    global ONLY
    if len(argv) >= 3 and argv[1] == "--only":
        ONLY = tuple(x for x in argv[2].split(",") if x)
        argv = argv[:1] + argv[3:]
    if len(argv) >= 3 and argv[1] == "selftest":
        return selftest(argv[2])
    if len(argv) >= 3 and argv[1] == "sizes":
        return cmd_sizes(argv[2])
    if len(argv) >= 4 and argv[1] == "circles":
        objs = [a for arg in argv[3:] for a in arg.split(";") if a]
        return cmd_circles(argv[2], objs)
    print(__doc__.strip().split("\n\n")[0], file=sys.stderr)
    print("usage: check_structure.py sizes SRC_ROOT | circles SRC_ROOT OBJECT...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
