#!/usr/bin/env python3
"""Docs that cannot drift: run by `make test`.

1. Every repository path that README.md or a docs/ page names under harness/, tracers/,
   kbench-module/ or scripts/ exists (a moved source file fails here, not in a reader's hands).
2. Every subcommand that `tracebench --help` lists has a --help snapshot in harness/tests/cmd/.

Usage: check-docs.py [BIN]   (BIN: the built tracebench, default target/release/tracebench)
Exit 1 with one line per problem.
"""
import glob, os, re, subprocess, sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATH = re.compile(r"(?<![\w/.-])((?:harness|tracers|kbench-module|scripts)/[A-Za-z0-9_./-]*[A-Za-z0-9_/])")


def build_output(p):
    """A file a Makefile beside it builds (kbench-module/kbench.ko, scripts/indep/tb-indep)."""
    d, name = os.path.split(os.path.join(ROOT, p))
    makefiles = glob.glob(os.path.join(d, "Makefile")) + glob.glob(os.path.join(d, "*.mk"))
    return any(re.search(rf"(^|\s){re.escape(name)}\b", open(m).read(), re.M) for m in makefiles)


def missing_paths():
    out = []
    pages = [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md")))
    for page in pages:
        for n, line in enumerate(open(page, encoding="utf-8"), 1):
            for p in PATH.findall(line):
                # Globs and placeholders name families of files, not one file.
                if any(c in p for c in "*<>{}") or p.endswith("/..."):
                    continue
                if not os.path.exists(os.path.join(ROOT, p.rstrip("."))) and not build_output(p.rstrip(".")):
                    out.append(f"{os.path.relpath(page, ROOT)}:{n}: names {p}, which does not exist")
    return out


def missing_snapshots(bin_path):
    help_text = subprocess.run([bin_path, "--help"], capture_output=True, text=True, check=True).stdout
    block = help_text.split("Commands:", 1)[1].split("\n\n", 1)[0]
    cmds = [l.split()[0] for l in block.splitlines() if l.strip() and l.split()[0] != "help"]
    snap = os.path.join(ROOT, "harness", "tests", "cmd")
    return [f"harness/tests/cmd/{c}-help.toml is missing: `tracebench {c} --help` has no snapshot" for c in cmds
            if not os.path.exists(os.path.join(snap, f"{c}-help.toml"))]


def main():
    bin_path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target", "release", "tracebench")
    problems = missing_paths() + missing_snapshots(bin_path)
    for p in problems:
        print(p)
    print(f"check-docs: {len(problems)} problem(s)" if problems else "check-docs: every named path exists; every subcommand has a help snapshot")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
