#!/usr/bin/env python3
"""The workflow replay (`make ci-replay`, run by .ci/run): every example workflow of
scripts/ci-example/, its jobs' steps run in order on this machine as GitHub's runner would run
them, as an unprivileged runner user with passwordless sudo (runner_user.py), with local stand-ins
for the `uses:` actions (standins.py) and a small tracer repository as the pull request
(scripts/ci-replay/tracer/: its head is either a no-op change or one that adds work).

Cases, each checked:
  gate / instructions, no-op change   the job passes end to end; the PR comment is gate.md; the
                                      artifact tar (as the runner user) holds the sudo-made results.
  gate / instructions, added work     the gate says exit 1 and the Verdict step fails with exit 1;
                                      every other step passes; here the tracebench cache misses and
                                      the install step runs (cargo is a stub: see standins.py).
  gate / timed, no-op change          every step runs and passes but the Verdict, whose exit must be
                                      the gate's 0 or 1: this machine is not the quiet self-hosted
                                      runner the job asks for, so its verdict is not judged.
  bencher / bench, github-action-benchmark / bench   every step passes; the uploaded files parse.

Why not in `make test`: it creates a user with passwordless sudo and installs sudo, which a test
run on a developer's machine must not do (and cannot, without root); .ci/run runs it as root on
a fresh machine. It takes about 20 s here (the timed gate's 32 interleaved runs are 3 s of it).
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, HERE)

WORK = "        slot[1] = payload;\n        slot[2] = payload;\n        slot[3] = payload;\n"


def fail(msg):
    print(f"ci-replay: {msg}", file=sys.stderr)
    sys.exit(2)


class Env:
    """What every job of the replay shares."""

    pr_number = 37
    repository = "example/tracer"
    tracebench_repo = "example/tracebench"

    def __init__(self, user, binary):
        self.user, self.home = user, user.home
        self.tb_src = ROOT
        self.tb_sha = git(ROOT, "rev-parse", "HEAD")
        # The binary the cache restores and the cargo stub installs: this checkout's release build.
        own = os.path.join(self.home, ".replay")
        os.makedirs(own)
        self.prebuilt = os.path.join(own, "tracebench")
        shutil.copy2(binary, self.prebuilt)
        os.chmod(own, 0o755)
        os.chmod(self.prebuilt, 0o755)
        self.tracer_repo = os.path.join(own, "tracer")
        self.base_sha, self.heads = make_tracer_repo(self.tracer_repo)
        self.head_sha = None
        self.cache = {}


def git(repo, *args):
    ident = ["-c", "user.name=ci-replay", "-c", "user.email=ci-replay@localhost"]
    return subprocess.run(["git", *ident, "-C", repo, *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def make_tracer_repo(path):
    """The PR's repository: the base commit, and two heads on top of it (noop: a comment edited;
    work: three more stores per event)."""
    src = os.path.join(HERE, "tracer")
    os.makedirs(path)
    for f in ("Makefile", "tracer.c"):
        shutil.copy(os.path.join(src, f), path)
    git(path, "init", "--quiet", "-b", "main")
    git(path, "add", ".")
    git(path, "commit", "--quiet", "-m", "base")
    base = git(path, "rev-parse", "HEAD")
    heads = {}
    c = open(os.path.join(src, "tracer.c")).read()
    for name, text in (("noop", c.replace("Each event", "Each call")), ("work", c.replace("    /* WORK */\n", WORK))):
        assert text != c, name
        git(path, "checkout", "--quiet", "-b", name, base)
        with open(os.path.join(path, "tracer.c"), "w") as f:
            f.write(text)
        git(path, "commit", "--quiet", "-am", name)
        heads[name] = git(path, "rev-parse", "HEAD")
    return base, heads


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="run only the cases whose name contains this (e.g. instructions)")
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "tracebench"),
                    help="the tracebench the cache restores (default: target/release/tracebench)")
    args = ap.parse_args()
    if os.geteuid() != 0:
        fail("must run as root: it creates a runner user with passwordless sudo, as GitHub's hosted runners "
             "have (run: sudo make ci-replay)")
    try:
        import yaml  # noqa: F401
    except ImportError:
        fail("PyYAML is missing: python3 -m pip install pyyaml (Debian: apt-get install python3-yaml)")
    if not os.access(args.bin, os.X_OK):
        fail(f"{args.bin}: no tracebench binary there; run `make build` first")

    import cases
    import expr
    import runner_user
    import standins

    def interrupted(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGHUP, interrupted)
    runner_user.ensure_sudo()
    problems = []
    try:
        with runner_user.RunnerUser() as user:
            env = Env(user, args.bin)
            for case in cases.CASES:
                if args.only and args.only not in case.__name__:
                    continue
                try:
                    found = case(env)
                except (expr.ExprError, standins.StandinError) as e:
                    # A form of the examples the replay does not know: that case fails, the others run.
                    found = [str(e)]
                problems += [f"{case.__name__}: {p}" for p in found]
    except KeyboardInterrupt:
        print("ci-replay: interrupted; the runner user, its home and its sudoers entry are removed", file=sys.stderr)
        return 130
    for p in problems:
        print(f"ci-replay: FAIL: {p}")
    print(f"ci-replay: {'FAILED' if problems else 'all cases pass'} ({len(problems)} problems)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
