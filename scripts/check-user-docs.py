#!/usr/bin/env python3
"""User docs speak to users: run by `make test`.

1. README.md, results/README.md and every chapter of the user part of docs/SUMMARY.md (the
   parts before "# Contributing") hold no tracker or process words: an issue number, "closing
   note", "session" in the sense of a work session, "this round", a commit hash, "the first
   version", "lent to this work", other agents. Development history belongs in the contributor
   part (docs/dev-notes.md), told as the reason for a choice.
2. Every `tracebench: error: ...` line that README.md or any docs/ page quotes outside a console
   example (those are run against the binary by harness/tests/doc_examples.rs) matches a message
   of harness/src or tracers/src: the message's constant text in order, its `{...}` placeholders
   standing for any text, `...` in the page standing for text cut.

Usage: check-user-docs.py [ROOT]   (default: the checkout this script is in)
Exit 1 with one line per offence: FILE:LINE: WHAT; how to fix it.
"""
import glob
import os
import re
import sys

# (pattern, what it is, how to fix it). Case-insensitive.
FORBIDDEN = [
    (r"\b(issues?|tickets?|PR|pull requests?)\s*#?\d+", "an issue number",
     "say what the reader needs, not which issue brought it"),
    (r"\bthe issue('s)?\b(?! of)", "a reference to the tracker's issue",
     "state the reason or the target itself"),
    (r"\bclosing note\b", "\"closing note\"", "put the figures on the page, or in docs/dev-notes.md"),
    (r"\bthis round\b", "\"this round\"", "say what is true now, without the work's history"),
    (r"\b(this|that|the previous|a previous|an earlier|the next|a later|our|my|work(ing)?) session\b",
     "\"session\" in the sense of a work session", "drop it; say what is true now"),
    (r"\bsessions? of work\b", "\"session\" in the sense of a work session", "drop it; say what is true now"),
    (r"\bcommit\s+[0-9a-f]{7,40}\b", "a commit hash", "say what changed for the reader, not where"),
    (r"\b(the|a) first version\b", "development history (\"the first version\")",
     "move it to docs/dev-notes.md, told as the reason for the choice"),
    (r"\b(previous|earlier|older) version of (this|the) (page|section|chapter|doc|docs|guide)\b",
     "a version of the docs", "say what is true now"),
    (r"\bas that version (of [a-z ]+)?printed\b", "development history (an earlier output)",
     "show today's output"),
    (r"\blent to this work\b|\bwas lent\b", "process talk (a machine \"lent\")", "say what the reader can do"),
    (r"\bother agents'?\b|\bagents' builds\b", "process talk (other agents)", "say \"other builds\", or drop it"),
]


def user_pages(root):
    """README.md, results/README.md and the chapters of docs/SUMMARY.md before "# Contributing"."""
    pages = [os.path.join(root, "README.md"), os.path.join(root, "results", "README.md")]
    summary = os.path.join(root, "docs", "SUMMARY.md")
    for line in open(summary, encoding="utf-8"):
        if line.strip().lower().startswith("# contributing"):
            break
        for target in re.findall(r"\]\(([^)]+\.md)\)", line):
            pages.append(os.path.join(root, "docs", target))
    return [p for p in pages if os.path.exists(p)]


def tracker_words(root):
    out = []
    for page in user_pages(root):
        rel = os.path.relpath(page, root)
        for n, line in enumerate(open(page, encoding="utf-8"), 1):
            for pat, what, fix in FORBIDDEN:
                m = re.search(pat, line, re.I)
                if m:
                    out.append(f"{rel}:{n}: {m.group(0)!r}: {what}; {fix}")
    return out


# ---- quoted error messages -------------------------------------------------------------------

def _scanner():
    """scripts/untested-messages.py, loaded once: its `literals` reads the sources' messages."""
    import importlib.util

    if not hasattr(_scanner, "mod"):
        here = os.path.dirname(os.path.abspath(__file__))
        spec = importlib.util.spec_from_file_location("untested_messages", os.path.join(here, "untested-messages.py"))
        _scanner.mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(_scanner.mod)
    return _scanner.mod


def rust_strings(text):
    """The string literals of a Rust source, unescaped, by the same scanner as
    scripts/untested-messages.py."""
    return [t for _, t in _scanner().literals(text)]


PLACEHOLDER = re.compile(r"\{[^{}]*\}")
VAR = None  # a placeholder in a template's piece list


def template_pieces(s):
    """A format string as constant pieces and VAR placeholders ({{ and }} are literal braces)."""
    s = s.replace("{{", "\x01").replace("}}", "\x02")
    pieces, at = [], 0
    for m in PLACEHOLDER.finditer(s):
        if m.start() > at:
            pieces.append(s[at:m.start()])
        pieces.append(VAR)
        at = m.end()
    if at < len(s):
        pieces.append(s[at:])
    return [p.replace("\x01", "{").replace("\x02", "}") if p is not VAR else VAR for p in pieces]


def matches(text, pieces, whole_start, whole_end):
    """Whether `text` is an instance of the pieces (VAR: any non-empty text). whole_start: text
    starts at the template's start (else anywhere in it); whole_end: text runs to its end (else it
    may stop anywhere, where the page cut it)."""
    starts = [(0, 0)] if whole_start else [(k, off) for k, p in enumerate(pieces)
                                           for off in ([0] if p is VAR else range(len(p)))]

    def go(i, k, off):
        if i == len(text):
            return (k == len(pieces) and off == 0) or not whole_end
        if k == len(pieces):
            return False
        p = pieces[k]
        if p is VAR:
            # a placeholder takes at least one character; the rest is tried by the next piece
            for j in range(i + 1, len(text) + 1):
                if go(j, k + 1, 0):
                    return True
            return not whole_end  # the text ends inside the placeholder
        rest = p[off:]
        if text.startswith(rest, i):
            return go(i + len(rest), k + 1, 0)
        if not whole_end and rest.startswith(text[i:]):
            return True
        return False

    return any(go(0, k, off) for k, off in starts)


def quoted_errors(root):
    """(page, line, message) for every `tracebench: error: MESSAGE` outside a tested console block."""
    pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    out = []
    for page in pages:
        in_block, tested = False, False
        for n, line in enumerate(open(page, encoding="utf-8"), 1):
            if line.lstrip().startswith("```"):  # a fence, also one indented in a list item
                if not in_block:
                    info = line.lstrip()[3:].strip().split()
                    parts = info[0].split(",") if info else [""]
                    tested = parts[0] == "console" and "ignore" not in parts
                in_block = not in_block
                continue
            if in_block and tested:
                continue
            for m in re.finditer(r"tracebench: error: (.+)", line):
                msg = m.group(1).rstrip()
                if not in_block:  # prose: the quote ends with the inline code span
                    msg = msg.split("`")[0] if line.count("`") else msg
                msg = msg.strip()
                if msg and msg not in ("...", "…"):
                    out.append((page, n, msg))
    return out


def unprinted_errors(root):
    templates = []  # (pieces, non-space characters of constant text)
    for d in ("harness/src", "tracers/src"):
        for f in glob.glob(os.path.join(root, d, "**", "*.rs"), recursive=True):
            for s in rust_strings(open(f, encoding="utf-8").read()):
                if len(s) >= 8 and " " in s:
                    t = template_pieces(s)
                    templates.append((t, sum(len(p.replace(" ", "")) for p in t if p is not VAR)))
    out = []
    for page, n, msg in quoted_errors(root):
        parts = [p.strip() for p in re.split(r"\s*(?:\.\.\.|…|\[\.\.\])\s*", msg)]
        ends_cut = bool(re.search(r"(\.\.\.|…|\[\.\.\])\)?\s*$", msg))
        ok = True
        for k, part in enumerate(parts):
            if not part or part in (")", "("):
                continue
            first, last = k == 0, k == len(parts) - 1
            whole_end = last and not ends_cut
            # A template that is mostly placeholders ('{path}: {why}') matches anything: it
            # counts only with enough constant text of its own.
            need = min(20, len(part.replace(" ", "")) // 2)
            # A message may be wrapped by its caller ("--out DIR: " + the reason): the part, or
            # what follows one of its leading "X: " prefixes, must be a template's instance.
            tails = [part]
            if first:
                tails += [part[m.end():] for m in re.finditer(r": ", part)][:2]
            if not any(c >= need and matches(tail, t, first, whole_end) for tail in tails for t, c in templates):
                ok = False
                break
        if not ok:
            out.append(f"{os.path.relpath(page, root)}:{n}: quotes an error message the binary does not print: "
                       f"{msg[:100]!r}; paste what tracebench prints now (cut with `...`), or remove it")
    return out


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    problems = tracker_words(root) + unprinted_errors(root)
    for p in problems:
        print(p)
    if problems:
        print(f"check-user-docs: {len(problems)} problem(s)")
        sys.exit(1)
    print("check-user-docs: no tracker or process words in the user docs; every quoted error is one tracebench prints")


if __name__ == "__main__":
    main()
