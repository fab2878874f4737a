"""GitHub Actions expressions, the forms the example workflows use: `${{ path.to.value }}`
substitution, and `if:` conditions made of status functions (always(), success(), failure(),
cancelled()), hashFiles(...), string literals, true, false, null, `==`, `!=`, `!`, `&&`, `||`
and parentheses.

Anything else (another function, a number, `contains(...)`) is an error, not a guess: a new form
in an example must fail the replay until this file learns it. Semantics follow GitHub's: a missing
property is null and reads as ''; `==` on strings ignores case; a condition without a status
function means `success() && (...)`.
"""
import re

TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>==|!=|&&|\|\||!|\(|\)|,)|(?P<name>[A-Za-z_][A-Za-z0-9_.-]*))"
)
STATUS = ("always", "success", "failure", "cancelled")
LITERALS = {"true": True, "false": False, "null": None}


class ExprError(Exception):
    pass


def tokens(text):
    out, pos = [], 0
    text = text.strip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ExprError(f"cannot read the expression at {text[pos:]!r} (in {text!r})")
        kind = m.lastgroup
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class Parser:
    """Recursive descent: or := and ('||' and)*; and := unary ('&&' unary)*;
    unary := '!' unary | cmp; cmp := atom (('=='|'!=') atom)?; atom := str | call | path | '(' or ')'."""

    def __init__(self, text, ctx):
        self.toks, self.i, self.ctx, self.text = tokens(text), 0, ctx, text

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else (None, None)

    def take(self, value=None):
        tok = self.peek()
        if tok[0] is None or (value is not None and tok[1] != value):
            raise ExprError(f"expected {value or 'more'} in {self.text!r}")
        self.i += 1
        return tok

    def parse(self):
        v = self.or_()
        if self.i != len(self.toks):
            raise ExprError(f"unexpected {self.peek()[1]!r} in {self.text!r}")
        return v

    def or_(self):
        v = self.and_()
        while self.peek() == ("op", "||"):
            self.take()
            r = self.and_()
            v = v if truthy(v) else r
        return v

    def and_(self):
        v = self.unary()
        while self.peek() == ("op", "&&"):
            self.take()
            r = self.unary()
            v = r if truthy(v) else v
        return v

    def unary(self):
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.cmp()

    def cmp(self):
        v = self.atom()
        if self.peek() in (("op", "=="), ("op", "!=")):
            op = self.take()[1]
            r = self.atom()
            same = text_of(v).lower() == text_of(r).lower()
            return same if op == "==" else not same
        return v

    def atom(self):
        kind, val = self.take()
        if kind == "str":
            return val[1:-1].replace("''", "'")
        if kind == "op" and val == "(":
            v = self.or_()
            self.take(")")
            return v
        if kind == "name" and self.peek() == ("op", "("):
            self.take()
            args = []
            while self.peek() != ("op", ")"):
                args.append(self.or_())
                if self.peek() == ("op", ","):
                    self.take()
            self.take(")")
            return self.call(val, args)
        if kind == "name" and val in LITERALS:
            return LITERALS[val]
        if kind == "name":
            return lookup(self.ctx, val)
        raise ExprError(f"unexpected {val!r} in {self.text!r}")

    def call(self, name, args):
        if name in STATUS:
            return self.ctx["__status__"](name)
        if name == "hashFiles":
            return self.ctx["__hashfiles__"](args)
        raise ExprError(f"function {name}() is not one the replay knows (scripts/ci-replay/expr.py)")


def truthy(v):
    return v not in (None, False, "", 0)


def text_of(v):
    if v is None:
        return ""
    if v is True or v is False:
        return "true" if v else "false"
    return str(v)


def lookup(ctx, path):
    """`steps.tb.outputs.sha`: an unknown context is an error (a typo, or a context the replay does
    not give); a missing property below a known one is null, as on GitHub."""
    head, *rest = path.split(".")
    if head not in ctx or head.startswith("__"):
        raise ExprError(f"context {head!r} is not one the replay gives (in {path!r})")
    v = ctx[head]
    for key in rest:
        v = v.get(key) if isinstance(v, dict) else None
    return v


def evaluate(text, ctx):
    return Parser(text, ctx).parse()


def substitute(text, ctx):
    """Every `${{ ... }}` in a string replaced by its value's text."""
    return re.sub(r"\$\{\{(.*?)\}\}", lambda m: text_of(evaluate(m.group(1), ctx)), text, flags=re.S)


def condition(text, ctx):
    """An `if:` value (with or without `${{ }}`) -> bool; success() is implied unless a status
    function is named."""
    if text is None:
        text = "success()"
    if isinstance(text, bool):
        return text
    text = str(text).strip()
    m = re.fullmatch(r"\$\{\{(.*)\}\}", text, flags=re.S)
    if m:
        text = m.group(1)
    if not any(kind == "name" and val in STATUS for kind, val in tokens(text)):
        text = f"success() && ({text})"
    return truthy(evaluate(text, ctx))
