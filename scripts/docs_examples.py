#!/usr/bin/env python3
"""Refresh the console examples of README.md and the user guide from real runs (make docs-examples).

Each page's ```console blocks (not `console,ignore`) are run in order in one fresh directory, so a
page's outputs tell one story from one results directory (README: run -o demo, then report demo).
The page's block is the template: each line it shows is looked up in the new output by its words
(figures aside: the same redaction as harness/tests/doc_examples.rs) and replaced by the new line;
lines the page does not show become `...`; a shown line ending in `[..]` keeps that cut; a command
that exits non-zero gets trycmd's `? N`. A shown line the tool no longer prints stops the script
(edit the page by hand then). The line "The console examples on this page are real ..." of a page names the machine.

Usage: docs_examples.py BIN PAGE.md...   (pages are rewritten in place, via a temp file and rename)
"""
import datetime
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

MARK = "The console examples on this page are real"
UNITS = {"ns", "µs", "us", "ms", "s"}


def redact(line):
    """Every figure, with its sign, unit and surrounding spaces, as [..] (doc_examples.rs's redact)."""
    out, i, n = "", 0, len(line)
    word = lambda ch: ch.isalnum() or ch == "_"
    while i < n:
        signed = line[i] in "+-−±x" and i + 1 < n and line[i + 1].isdigit()
        if not ((line[i].isdigit() and line[i].isascii()) or signed) or (i > 0 and word(line[i - 1])):
            out += line[i]
            i += 1
            continue
        i += 1
        while i < n and (word(line[i]) or (line[i] in ".," and i + 1 < n and line[i + 1].isdigit())):
            i += 1
        j = i
        while j < n and line[j] == " ":
            j += 1
        k = j
        while k < n and word(line[k]):
            k += 1
        if k > j and line[j:k] in UNITS:
            i = k
        out = out.rstrip(" ")
        while i < n and line[i] == " ":
            i += 1
        if not out.endswith("[..]"):
            out += "[..]"
    return out


def widths(t):
    """report's table: its header and rule widen with the paths column (doc_examples.rs's widths)."""
    if t.startswith("#  tracer"):
        # Every gap of two or more spaces follows the widest value of its column.
        return "#  tracer" + re.sub(r" {2,}", "[..]", t[len("#  tracer"):])
    if len(t) > 3 and set(t) == {"-"}:
        return "---[..]"
    return t


def pattern(template, paths_col):
    """A regex of the raw output lines that show as this template line, and whether it ends cut."""
    row = paths_col is not None and (template[:1].isdigit() or template.startswith("—"))
    t = redact(template[:paths_col] if row else template)
    # A row's columns are as wide as their widest value: every gap of two or more spaces may change.
    t = re.sub(r"( {2,}|(\[\.\.\]) +)+", "[..]", t) if row else widths(t)
    cut = row or template.rstrip().endswith("[..]")
    if cut and not t.endswith("[..]"):
        t += "[..]"
    pieces = t.split("[..]")
    body = ".*?".join(re.escape(p) for p in (pieces[:-1] if cut else pieces))
    return re.compile(body), cut, row


def refresh(cmd, status, output, shown):
    """The block's lines for one command: new lines in the places of the shown ones."""
    lines = output.splitlines()
    out, at, paths_col, dots = [], 0, None, False
    if status != 0:
        out.append(f"? {status}")
    for t in shown:
        if t.startswith("? "):
            continue
        if t == "...":
            dots = True
            continue
        if t.startswith("#  tracer"):
            paths_col = t.find("paths:")
        rx, cut, row = pattern(t, paths_col)
        for k in range(at, len(lines)):
            m = rx.match(lines[k]) if cut else rx.fullmatch(lines[k])
            if m:
                break
        else:
            sys.exit(f"docs-examples: `{cmd}` no longer prints a line like\n  {t}\nits output:\n{output}")
        if dots or k > at:
            out.append("...")
        dots = False
        out.append(lines[k] if row or not cut else lines[k][: m.end()] + "[..]")
        at = k + 1
    if dots or at < len(lines):
        out.append("...")
    return out


def machine():
    model = ""
    try:
        for l in open("/proc/cpuinfo"):
            if l.startswith("model name"):
                model = l.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        vm = any(l.startswith("flags") and " hypervisor" in l for l in open("/proc/cpuinfo"))
    except OSError:
        vm = False
    return f"{os.cpu_count()}-CPU {'VM' if vm else 'machine'} ({model or platform.machine()}, Linux {platform.release()})"


def run_page(binary, path, stamp):
    work = tempfile.mkdtemp(prefix="docs-examples.")
    try:
        refresh_page(binary, path, stamp, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def refresh_page(binary, path, stamp, work):
    text = open(path, encoding="utf-8").read().split("\n")
    env = dict(os.environ, PATH=os.path.dirname(os.path.abspath(binary)) + os.pathsep + os.environ["PATH"])
    out, i, blocks = [], 0, 0
    while i < len(text):
        l = text[i]
        out.append(l)
        i += 1
        info = l[3:].strip().split(",") if l.startswith("```") else None
        if not info or info[0] != "console" or "ignore" in info:
            if l.startswith("```"):  # another block: copy it whole
                while i < len(text) and not text[i].startswith("```"):
                    out.append(text[i])
                    i += 1
                if i < len(text):
                    out.append(text[i])
                    i += 1
            continue
        body = []
        while not text[i].startswith("```"):
            body.append(text[i])
            i += 1
        fence = text[i]
        i += 1
        blocks += 1
        cmds = []  # (command line, shown lines)
        for b in body:
            if b.startswith("$ "):
                cmds.append((b, []))
            else:
                cmds[-1][1].append(b)
        for line, shown in cmds:
            # One pipe for both, as trycmd reads them: warnings (stderr) in their place.
            p = subprocess.run(shlex.split(line[2:]), cwd=work, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=600)
            out.append(line)
            out.extend(refresh(line, p.returncode, p.stdout, shown))
        out.append(fence)
    for k, l in enumerate(out):
        at = l.find(MARK)
        if at >= 0:
            out[k] = (f"{l[:at]}{MARK}, from `make docs-examples` on a {machine()}, {stamp}, one results "
                      "directory per page; `...` marks lines cut, `[..]` the end of a line cut.")
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n".join(out))
    os.replace(tmp, path)
    print(f"docs-examples: {path}: {blocks} console blocks refreshed")


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: docs_examples.py BIN PAGE.md...")
    binary = sys.argv[1]
    if not os.access(binary, os.X_OK):
        sys.exit(f"docs-examples: {binary} is not an executable; build it first (make build)")
    stamp = datetime.date.today().isoformat()
    for page in sys.argv[2:]:
        run_page(binary, page, stamp)


if __name__ == "__main__":
    main()
