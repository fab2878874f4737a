"""Unit tests of the workflow replay's expressions and $GITHUB_OUTPUT reader (scripts/ci-replay/),
which need neither root nor a runner user: `make test` runs them; the replay itself is `make ci-replay`."""
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.join(ROOT, "scripts", "ci-replay"))

import expr  # noqa: E402
from workflow import read_outputs  # noqa: E402


def ctx(failed=False, files=()):
    return {
        "steps": {"tb-cache": {"outputs": {"cache-hit": "true"}}, "gate": {"outputs": {"rc": "1"}}},
        "vars": {"TRACEBENCH_REPO": "o/tb"},
        "github": {"event": {"pull_request": {"number": 37}}},
        "__status__": lambda n: {"always": True, "success": not failed, "failure": failed, "cancelled": False}[n],
        "__hashfiles__": lambda pats: "abc" if set(pats) & set(files) else "",
    }


class Expressions(unittest.TestCase):
    def test_the_forms_the_examples_use(self):
        c = ctx(files=("gate.md",))
        self.assertFalse(expr.condition("steps.tb-cache.outputs.cache-hit != 'true'", c))
        self.assertTrue(expr.condition("steps.nothing.outputs.cache-hit != 'true'", c))
        self.assertTrue(expr.condition("always() && hashFiles('gate.md') != ''", c))
        self.assertFalse(expr.condition("always() && hashFiles('gate.xml') != ''", c))
        self.assertEqual(expr.substitute("pr ${{ github.event.pull_request.number }} of ${{ vars.TRACEBENCH_REPO }}", c),
                         "pr 37 of o/tb")
        self.assertEqual(expr.substitute("rc=${{ steps.gate.outputs.rc }}", c), "rc=1")

    def test_a_failed_step_skips_the_rest_but_always(self):
        c = ctx(failed=True, files=("gate.md",))
        self.assertFalse(expr.condition(None, c))
        self.assertFalse(expr.condition("steps.tb-cache.outputs.cache-hit != 'true' || true", c))
        self.assertTrue(expr.condition("always()", c))
        self.assertTrue(expr.condition("${{ failure() }}", c))

    def test_an_unknown_form_is_an_error_not_a_guess(self):
        for text in ("contains(github.ref, 'x')", "secrets.X == 'y'", "1 == 1", "steps.a.outputs.b ==="):
            with self.assertRaises(expr.ExprError, msg=text):
                expr.condition(text, ctx())


class Outputs(unittest.TestCase):
    def test_key_value_and_heredoc_lines(self):
        with tempfile.NamedTemporaryFile("w", suffix=".out", delete=False) as f:
            f.write("sha=abc=d\nbody<<EOF\nline 1\nline 2\nEOF\nrc=0\n")
        try:
            self.assertEqual(read_outputs(f.name), {"sha": "abc=d", "body": "line 1\nline 2", "rc": "0"})
        finally:
            os.unlink(f.name)


class Examples(unittest.TestCase):
    def test_every_expression_of_the_examples_is_one_the_replay_reads(self):
        try:
            import yaml
        except ImportError:
            print("SKIP: PyYAML is not installed; the example workflows' expressions were not checked")
            return
        c = ctx()
        c.update(runner={"os": "Linux", "arch": "X64"}, matrix={"runner": "r"}, secrets={}, env={})
        c["github"]["token"] = "t"
        seen = 0
        for name in sorted(os.listdir(os.path.join(ROOT, "scripts", "ci-example"))):
            if not name.endswith(".yml"):
                continue
            with open(os.path.join(ROOT, "scripts", "ci-example", name)) as f:
                wf = yaml.safe_load(f)
            for job in wf["jobs"].values():
                for step in job["steps"]:
                    expr.condition(step.get("if"), c)
                    for v in [step.get("run", "")] + [str(x) for x in (step.get("with") or {}).values()] + \
                            [str(x) for x in (step.get("env") or {}).values()]:
                        expr.substitute(v, c)
                        seen += v.count("${{")
        self.assertGreater(seen, 10)


if __name__ == "__main__":
    unittest.main(verbosity=1)
