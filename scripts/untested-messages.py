#!/usr/bin/env python3
"""Lists the user-facing error messages that no test names, and fails if there are more of them
than the count recorded in scripts/untested-messages.count (so the list only shrinks).

    python3 scripts/untested-messages.py [--update] [harness/src tracers/src]

A user-facing message is a string literal of the non-test sources that an error is made of:
the text of a `#[error("...")]` attribute (not a bare "{0}"), or the first literal given to
`Usage(`, `Config(`, `Mismatch(`, `Counters(`, `Disturbance(`, `Pin(`, `TracerError::setup(_, `,
`Err(`, or any literal that carries a `fix:` hint. Test code is harness/tests, tracers/tests,
files named tests.rs or *_test.rs, and everything after a file's first `#[cfg(test)]`.

A message counts as tested when a test names it: a literal of the test code holds a piece of the
message's fixed text (a phrase of 10 characters or more between its `{...}` placeholders), or a
phrase of the message's own fixed text (12 or more) appears in a test literal, or the two share a
phrase of 20 characters or more (a needle that runs over a placeholder: "/dev/kbench not found: build
and load ..."). That is what a test that triggers the
error and checks its line does (`assert!(err.contains("at least two values"))`); a message that
no test mentions is certainly untested, so the list is a floor, not a proof of coverage.

--update writes the current count into the count file (do it when the count went down).
"""
import difflib
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COUNT_FILE = os.path.join(ROOT, "scripts", "untested-messages.count")
TEST_DIRS = ["harness/tests", "tracers/tests"]

# What comes just before a message literal (whitespace collapsed).
TRIGGER = re.compile(
    r"(#\[error\(|\bUsage\(|\bConfig\(|\bMismatch\(|\bCounters\(|\bDisturbance\(|\bPin\(|"
    r"Error::setup\([^()\"]*,|\bErr\()\s*(format!\(\s*)?$"
)
PLACEHOLDER = re.compile(r"\{[^{}]*\}")


def unescape(s):
    s = re.sub(r"\\\n\s*", "", s)
    return s.replace('\\"', '"').replace("\\n", " ").replace("\\'", "'").replace("\\\\", "\\")


CHAR = re.compile(r"'(\\.|\\u\{[0-9a-fA-F]+\}|[^\\'])'")
RAW = re.compile(r'r(#*)"')


def literals(code):
    """(offset, text) of each string literal, skipping comments and char literals."""
    out, i, n = [], 0, len(code)
    while i < n:
        c = code[i]
        if code.startswith("//", i):
            i = code.find("\n", i)
            i = n if i < 0 else i
        elif code.startswith("/*", i):
            j = code.find("*/", i + 2)
            i = n if j < 0 else j + 2
        elif c == "r" and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] == "_")) and RAW.match(code, i):
            m = RAW.match(code, i)
            close = '"' + m.group(1)
            j = code.find(close, m.end())
            j = n if j < 0 else j
            out.append((i, code[m.end() : j]))
            i = j + len(close)
        elif c == '"':
            j = i + 1
            while j < n and code[j] != '"':
                j += 2 if code[j] == "\\" else 1
            out.append((i, unescape(code[i + 1 : j])))
            i = j + 1
        elif c == "'":
            m = CHAR.match(code, i)
            i = m.end() if m else i + 1
        else:
            i += 1
    return out


def split_test(path, text):
    """(non-test code, test code) of a source file."""
    name = os.path.basename(path)
    rel = os.path.relpath(path, ROOT)
    if name == "tests.rs" or name.endswith("_test.rs") or any(rel.startswith(d + "/") for d in TEST_DIRS):
        return "", text
    i = text.find("#[cfg(test)]")
    return (text, "") if i < 0 else (text[:i], text[i:])


def pieces(text, minimum):
    """The fixed parts of a format string that are phrases (a space inside: a path or a name alone,
    like /sys/devices/system/cpu/online, says nothing of which message a test checks), long
    enough to be distinctive."""
    parts = [p.strip(" :;,'`()") for p in PLACEHOLDER.split(text.replace("{{", "(").replace("}}", ")"))]
    return [p for p in parts if len(p) >= minimum and " " in p]


def rust_files(dirs):
    for d in dirs:
        for base, _, files in os.walk(os.path.join(ROOT, d)):
            for f in sorted(files):
                if f.endswith(".rs"):
                    yield os.path.join(base, f)


def main(argv):
    update = "--update" in argv
    dirs = [a for a in argv if not a.startswith("--")] or ["harness/src", "tracers/src"]
    messages, test_literals = [], []
    for path in list(rust_files(dirs + TEST_DIRS)):
        text = open(path, encoding="utf-8").read()
        code, tests = split_test(path, text)
        test_literals += [t for _, t in literals(tests)]
        for off, lit in literals(code):
            before = " ".join(code[max(0, off - 120) : off].split())
            fixed = PLACEHOLDER.sub("", lit).strip(" :'")
            if len(fixed) < 8:
                continue  # "{0}", "{path}: {why}": the words are someone else's
            if TRIGGER.search(before) or "fix:" in lit:
                line = code.count("\n", 0, off) + 1
                messages.append((os.path.relpath(path, ROOT), line, lit))
    needles = [p for t in test_literals for p in pieces(t, 10)]
    haystack = "\n".join(test_literals)

    phrases = [t for t in test_literals if len(t) >= 20 and " " in t]

    def shares_a_phrase(piece):
        for t in phrases:
            m = difflib.SequenceMatcher(None, piece, t, autojunk=False).find_longest_match(0, len(piece), 0, len(t))
            if m.size >= 20 and " " in piece[m.a : m.a + m.size]:
                return True
        return False

    def tested(msg):
        own = pieces(msg, 10)
        if any(n in p for n in needles for p in own) or any(p in haystack for p in pieces(msg, 12)):
            return True
        return any(shares_a_phrase(p) for p in pieces(msg, 20))

    untested = [m for m in messages if not tested(m[2])]
    for path, line, lit in untested:
        print(f"  {path}:{line}: {lit}")
    n = len(untested)
    print(f"untested user-facing messages: {n} of {len(messages)} (listed above; scripts/untested-messages.py)")
    if update:
        with open(COUNT_FILE, "w") as f:
            f.write(f"{n}\n")
        print(f"recorded {n} in {os.path.relpath(COUNT_FILE, ROOT)}")
        return 0
    try:
        allowed = int(open(COUNT_FILE).read().split()[0])
    except (OSError, ValueError, IndexError) as e:
        print(f"error: cannot read the recorded count in {COUNT_FILE}: {e} (fix: run with --update)", file=sys.stderr)
        return 2
    if n > allowed:
        print(
            f"error: {n} untested messages, more than the {allowed} recorded in scripts/untested-messages.count: "
            "a new message needs a test that triggers it and checks its line",
            file=sys.stderr,
        )
        return 1
    if n < allowed:
        print(f"(down from {allowed}: run `python3 scripts/untested-messages.py --update` to record it)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
