#!/usr/bin/env python3
"""Fixtures for scripts/check-structure.py: circles it must find (a path used inline in an
expression, a `use super::{a, b}` group, a file beside a mod.rs, a bare path into a child that
`mod x;` declares) and a clean crate it must pass.
Run: python3 scripts/tests/check_structure_test.py (exits 1 on the first failure)."""
import importlib.util
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("cs", os.path.join(HERE, "..", "check-structure.py"))
cs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cs)


def crate(d, files):
    for rel, text in files.items():
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    return d


CASES = [
    (
        "inline path in an expression",
        {
            "lib.rs": "mod report;\n",
            "report/mod.rs": "mod analyze;\nmod irregular;\n",
            "report/analyze.rs": "use super::irregular;\npub const MIN: u64 = 3;\nfn f() { irregular::g(); }\n",
            "report/irregular.rs": "fn g() -> bool { 2 < super::analyze::MIN }\n",
        },
        ["report/analyze", "report/irregular"],
    ),
    (
        "use group right after super::",
        {
            "lib.rs": "mod report;\n",
            "report/mod.rs": "mod a;\nmod b;\nmod c;\n",
            "report/a.rs": "use super::{b, c::{X, Y}};\n",
            "report/b.rs": "fn f() { let _ = crate::report::a::Z; }\n",
            "report/c.rs": "pub const X: u8 = 1;\n",
        },
        ["report/a", "report/b"],
    ),
    (
        "super::super from a nested file",
        {
            "lib.rs": "mod top;\nmod other;\n",
            "top/mod.rs": "mod inner;\n",
            "top/inner.rs": "fn f() { super::super::other::g(); }\n",
            "other.rs": "use crate::top::inner;\n",
        },
        ["other", "top/inner"],
    ),
    (
        "bare path into a child declared with `mod x;`",
        {
            "lib.rs": "mod runner;\n",
            "runner/mod.rs": "mod cell;\nmod singlestep;\n",
            "runner/cell.rs": "use super::singlestep;\nfn f() { singlestep::cell_main(); }\npub fn name_process() {}\n",
            "runner/singlestep/mod.rs": "mod stepper;\nuse stepper::Record;\npub fn cell_main() { stepper::{run}; }\n",
            "runner/singlestep/stepper.rs": "use crate::runner::cell::name_process;\npub struct Record;\n",
        },
        ["runner/cell", "runner/singlestep", "runner/singlestep/stepper"],
    ),
    (
        "no circle: a folder's face names its child, the child takes from the face",
        {
            "lib.rs": "mod clock;\n",
            "clock/mod.rs": "mod x86;\npub use x86::Tsc;\npub trait Clock {}\n",
            "clock/x86.rs": "use super::Clock;\npub struct Tsc;\n",
        },
        [],
    ),
    (
        "no circle (one-way imports, a test module ignored)",
        {
            "lib.rs": "mod a;\nmod b;\n",
            "a.rs": "use crate::b::X;\n#[cfg(test)]\nmod tests {\n    use crate::b;\n}\n",
            "b.rs": "pub const X: u8 = 1;\n#[cfg(test)]\nmod tests {\n    use crate::a;\n}\n",
        },
        [],
    ),
]


C_CASES = [
    (
        "C: a main file and a sub-command calling each other",
        {
            "run.c": "#include \"run.h\"\nvoid die(const char *w)\n{\n}\nint main(int c, char **v)\n{\n\treturn cmd_loop(c, v);\n}\n",
            "run-loop.c": "#include \"run.h\"\nint cmd_loop(int c, char **v)\n{\n\tdie(\"x\");\n\treturn 0;\n}\n",
        },
        ["run-loop.c", "run.c"],
    ),
    (
        "C: main -> sub-command -> common, static helpers ignored",
        {
            "run.c": "int main(int c, char **v)\n{\n\treturn cmd_loop(c, v);\n}\n",
            "run-loop.c": "static int helper(void)\n{\n\treturn 0;\n}\nint cmd_loop(int c, char **v)\n{\n\tdie(\"x\");\n\treturn helper();\n}\n",
            "run-common.c": "/* die() is called by everyone */\nvoid die(const char *w)\n{\n\thelper();\n}\n",
        },
        [],
    ),
]


def main():
    failed = 0
    for name, files, want in C_CASES:
        with tempfile.TemporaryDirectory(prefix="check-structure-") as d:
            got = cs.c_circles(crate(d, files))
        ok = (not want and not got) or (want and got and all(w in got[0] for w in want))
        print(f"{'ok' if ok else 'FAIL'}: {name}: {got or 'no circle'}")
        failed += not ok
    for name, files, want in CASES:
        with tempfile.TemporaryDirectory(prefix="check-structure-") as d:
            problems, _ = cs.check_crate(crate(d, files))
        got = [p for p in problems if "between files" in p]
        ok = (not want and not got) or (want and got and all(w in got[0] for w in want))
        print(f"{'ok' if ok else 'FAIL'}: {name}: {got or 'no circle'}")
        failed += not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
