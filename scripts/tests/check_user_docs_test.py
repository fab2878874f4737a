#!/usr/bin/env python3
"""scripts/check-user-docs.py: it passes on the real tree, fails with one line naming the page and
line on a planted "issue 12" in a user chapter (a temporary copy of the docs), leaves the
contributor part alone, and fails on a quoted error message the binary does not print.
Run: python3 scripts/tests/check_user_docs_test.py (exits 1 on the first failure)."""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CHECK = os.path.join(ROOT, "scripts", "check-user-docs.py")


def run(root=None):
    args = [sys.executable, CHECK] + ([root] if root else [])
    p = subprocess.run(args, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def copy_tree():
    """README.md, docs/ and results/README.md copied; the sources linked (the error check reads them)."""
    tmp = tempfile.mkdtemp(prefix="check-user-docs.")
    shutil.copy(os.path.join(ROOT, "README.md"), tmp)
    shutil.copytree(os.path.join(ROOT, "docs"), os.path.join(tmp, "docs"))
    os.makedirs(os.path.join(tmp, "results"))
    shutil.copy(os.path.join(ROOT, "results", "README.md"), os.path.join(tmp, "results"))
    for d in ("harness", "tracers"):
        os.makedirs(os.path.join(tmp, d))
        os.symlink(os.path.join(ROOT, d, "src"), os.path.join(tmp, d, "src"))
    return tmp


def append(root, page, text):
    with open(os.path.join(root, page), "a", encoding="utf-8") as f:
        f.write(text)
    return sum(1 for _ in open(os.path.join(root, page), encoding="utf-8"))


def fail(msg):
    sys.exit(f"check_user_docs_test: {msg}")


code, out = run()
if code != 0:
    fail(f"the real tree must pass, got exit {code}:\n{out}")

tmp = copy_tree()
try:
    code, out = run(tmp)
    if code != 0:
        fail(f"an untouched copy must pass, got exit {code}:\n{out}")

    # A planted issue number in a user chapter fails, naming the page and the line.
    line = append(tmp, "docs/sweeps.md", "\nThis knob came with issue 12.\n")
    code, out = run(tmp)
    if code != 1 or f"docs/sweeps.md:{line}: 'issue 12'" not in out:
        fail(f"a planted 'issue 12' in docs/sweeps.md must fail at line {line}, got exit {code}:\n{out}")
    shutil.copy(os.path.join(ROOT, "docs", "sweeps.md"), os.path.join(tmp, "docs", "sweeps.md"))

    # Process words too, in the README and in results/README.md.
    append(tmp, "README.md", "\nMeasured in this round, see the closing note.\n")
    append(tmp, "results/README.md", "\nFixed in commit 0fbed7c.\n")
    code, out = run(tmp)
    for want in ("README.md:", "'this round'", "'closing note'", "results/README.md:", "'commit 0fbed7c'"):
        if want not in out:
            fail(f"expected {want!r} in the check's output, got exit {code}:\n{out}")
    shutil.copy(os.path.join(ROOT, "README.md"), tmp)
    shutil.copy(os.path.join(ROOT, "results", "README.md"), os.path.join(tmp, "results"))

    # The contributor part may tell the history: the check leaves it alone.
    append(tmp, "docs/dev-notes.md", "\nThe first version of this, from issue 12, was slower.\n")
    code, out = run(tmp)
    if code != 0:
        fail(f"docs/dev-notes.md is a contributor page and must not be checked for tracker words:\n{out}")

    # An LTTng session is a word of the domain, not process talk.
    append(tmp, "docs/tracers.md", "\nEach run creates its own LTTng session and a session daemon.\n")
    code, out = run(tmp)
    if code != 0:
        fail(f"'LTTng session' must pass:\n{out}")

    # A quoted error the binary does not print (an older wording) fails; today's wording, cut, passes.
    line = append(tmp, "docs/plugins.md", "\n```text\ntracebench: error: plugin 'x.so': ABI version 42, this "
                  "tracebench speaks 1 (fix: rebuild the plugin)\n```\n")
    code, out = run(tmp)
    if code != 1 or f"docs/plugins.md:{line - 1}: quotes an error message" not in out:
        fail(f"an error message the binary does not print must fail at line {line - 1}, got exit {code}:\n{out}")
    shutil.copy(os.path.join(ROOT, "docs", "plugins.md"), os.path.join(tmp, "docs", "plugins.md"))
    append(tmp, "docs/plugins.md", "\n```text\ntracebench: error: plugin 'x.so': ABI version 42 in "
           "tracebench_tracer_v1, this tracebench speaks 1 there (fix: ...)\n```\n")
    code, out = run(tmp)
    if code != 0:
        fail(f"today's ABI message, cut with '...', must pass:\n{out}")
finally:
    shutil.rmtree(tmp, ignore_errors=True)

print("check_user_docs_test: ok")
