#!/usr/bin/env python3
"""Structure checks of docs/ARCHITECTURE.md, run by `make test`:

1. no import circles between the files of a crate, nor between its top-level modules
   (`crate::`, `super::` and `self::` paths, and bare paths into a child the file declares with
   `mod x;` (`use stepper::Record`, `stepper::run()`), `use` groups included; comments and inline
   test modules left out; a file's import of its own ancestor module, the folder's face that
   declares it, closes no circle);
2. no circle of calls between the C files of one directory (a file calls a non-static function
   another defines, and back, e.g. a main file and its sub-commands);
3. no source file over 500 lines.

Prints each circle (or long file) and exits 1; prints one summary line and exits 0 otherwise.
Usage: scripts/check-structure.py CRATE_SRC_DIR...
"""
import os
import re
import sys

MAX_LINES = 500
SOURCE_EXT = (".rs", ".c", ".h", ".py", ".sh")


def modules(src):
    """{module path tuple: file path} of one crate's src directory."""
    out = {}
    for dp, _, fn in os.walk(src):
        for f in fn:
            if not f.endswith(".rs"):
                continue
            p = os.path.join(dp, f)
            parts = os.path.relpath(p, src)[:-3].split(os.sep)
            if parts[-1] == "mod":
                parts = parts[:-1]
            if parts in (["lib"], ["main"]):
                parts = []
            out[tuple(parts)] = p
    return out


def use_tree(text):
    """Paths of one `use` tree tail: `a::b`, `{a, b::{c, d}}`, `a::{b, c}` -> [[a, b], ...]."""
    text = text.strip()
    if text.startswith("{") and text.endswith("}"):
        out, depth, cur = [], 0, ""
        for ch in text[1:-1] + ",":
            if ch == "," and depth == 0:
                if cur.strip():
                    out += use_tree(cur)
                cur = ""
                continue
            depth += (ch == "{") - (ch == "}")
            cur += ch
        return out
    head, sep, rest = text.partition("::{")
    segs = [x for x in head.split("::") if re.match(r"^\w+$", x)]
    if sep:
        return [segs + t for t in use_tree("{" + rest)] or [segs]
    return [segs]


def braced(src, start):
    """The balanced `{...}` that starts at src[start], or "" when it is not one."""
    depth = 0
    for i in range(start, len(src)):
        depth += (src[i] == "{") - (src[i] == "}")
        if depth == 0:
            return src[start : i + 1]
    return ""


def references(mod, path):
    """Module paths that one file names: in `use` items and inline in expressions
    (`super::analyze::MIN_MODE_CALLS`), `use` groups (`super::{a, b::c}`) included. `self` is
    the file's own module and `super` its parent, whether the file is a mod.rs or not."""
    src = open(path, encoding="utf-8").read()
    src = re.split(r"#\[cfg\(test\)\]\s*mod tests\s*\{", src)[0]
    src = re.sub(r"//.*", "", src)
    # A child declared here (`mod stepper;`) is named by a bare path: `use stepper::Record`.
    children = re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", src, re.M)
    for child in children:
        for m in re.finditer(r"(?<![\w:])" + child + r"((?:::\w+)*)(::\{)?", src):
            if not (m.group(1) or m.group(2)):
                continue
            segs = m.group(1).split("::")[1:]
            groups = use_tree(braced(src, m.end() - 1)) if m.group(2) else [[]]
            for tail in groups:
                yield list(mod) + [child] + segs + tail
    for m in re.finditer(r"\b(crate|super|self)((?:::\w+)*)(::\{)?", src):
        base, segs = m.group(1), m.group(2).split("::")[1:]
        groups = use_tree(braced(src, m.end() - 1)) if m.group(3) else [[]]
        for tail in groups:
            if base == "crate":
                yield segs + tail
                continue
            here, s = list(mod), list(segs)
            if base == "super":
                here = here[:-1]
            while s and s[0] == "super":
                s, here = s[1:], here[:-1]
            yield here + s + tail


def circles(edges, nodes):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(edges.get(nxt, ())))))
                elif nxt in on:
                    low[v] = min(low[v], index[nxt])
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
                    out.append(sorted(comp))
    return out


def check_crate(src):
    mods = modules(src)

    def resolve(path):
        for k in range(len(path), -1, -1):
            if tuple(path[:k]) in mods:
                return tuple(path[:k])
        return None

    files, tops = {}, {}
    for mod, path in mods.items():
        if os.path.basename(path) in ("tests.rs",) or path.endswith("_test.rs"):
            continue
        for ref in references(mod, path):
            t = resolve(ref)
            if t is None or t == mod:
                continue
            # A file that names its own ancestor (the mod.rs that declares it, or one above) takes
            # from the folder it stands in, whose face names it back: no circle is drawn there.
            if tuple(mod[: len(t)]) != t:
                files.setdefault(mod, set()).add(t)
            a, b = (mod[:1] or ("crate",)), (t[:1] or ("crate",))
            if a != b and mod and t:
                tops.setdefault(a, set()).add(b)
    problems = []
    name = lambda m: "/".join(m) or "crate"
    for comp in circles(files, sorted(mods)):
        problems.append(f"{src}: import circle between files: {', '.join(name(m) for m in comp)}")
    for comp in circles(tops, sorted(tops)):
        problems.append(f"{src}: import circle between modules: {', '.join(name(m) for m in comp)}")
    return problems, len(mods)


C_DEF = re.compile(r"^(?!static\b)(?:[A-Za-z_][\w \t\*]*?[\s\*])?(\w+)\s*\([^;{]*\)\s*(?:__attribute__\S*\s*)?\{?\s*$")
C_CALL = re.compile(r"\b(\w+)\s*\(")


def c_circles(root):
    """Call circles between the .c files of each directory under root."""
    out = []
    for dp, dn, fn in os.walk(root):
        dn[:] = [d for d in dn if d not in ("target", ".git", ".cache", "results", "node_modules")]
        cs = sorted(f for f in fn if f.endswith(".c"))
        if len(cs) < 2:
            continue
        texts, defs = {}, {}
        for f in cs:
            t = open(os.path.join(dp, f), encoding="utf-8", errors="replace").read()
            t = re.sub(r"/\*.*?\*/", "", t, flags=re.S)
            t = re.sub(r"//.*", "", t)
            texts[f] = t
            for line in t.splitlines():
                m = C_DEF.match(line)
                if m and m.group(1) not in ("if", "while", "for", "switch", "return", "sizeof"):
                    defs.setdefault(m.group(1), f)
        edges = {}
        for f, t in texts.items():
            for m in C_CALL.finditer(t):
                g = defs.get(m.group(1))
                if g and g != f:
                    edges.setdefault(f, set()).add(g)
        for comp in circles(edges, cs):
            out.append(f"{dp}: C files call each other in a loop: {', '.join(comp)}")
    return out


def long_files(root):
    out = []
    for dp, dn, fn in os.walk(root):
        dn[:] = [d for d in dn if d not in ("target", ".git", ".cache", "results", "node_modules")]
        for f in fn:
            if f.endswith(SOURCE_EXT):
                p = os.path.join(dp, f)
                n = sum(1 for _ in open(p, encoding="utf-8", errors="replace"))
                if n > MAX_LINES:
                    out.append(f"{p}: {n} lines (over {MAX_LINES}): split it")
    return out


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    problems, nfiles = [], 0
    for src in argv[1:]:
        if not os.path.isdir(src):
            print(f"check-structure: {src} is not a directory", file=sys.stderr)
            return 2
        p, n = check_crate(src)
        problems += p
        nfiles += n
    problems += c_circles(".")
    problems += long_files(".")
    for p in problems:
        print(f"check-structure: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"check-structure: {nfiles} Rust files in {len(argv) - 1} crates: no import circles; no C call circles; no source file over {MAX_LINES} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
