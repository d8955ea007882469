"""AST mutation operators: every place in a module where one small, deliberate change applies.

A *point* is one change at one node: a comparison flipped at its boundary or negated, a
condition negated, an integer constant moved by one, a statement deleted, an error code swapped
for its neighbour in the catalog, ``and``/``or`` swapped, a returned value changed. Points are
numbered in the order :func:`points` walks a freshly parsed tree, so a mutant is named by its
module and its number and is rebuilt from the source alone (:func:`mutate`).

What is never mutated: docstrings, annotations, ``__all__``, ``if TYPE_CHECKING`` blocks and
the ``if __name__ == "__main__"`` stanza (none of them is behaviour the cases could see).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["OPERATORS", "Point", "error_codes", "mutate", "points"]

OPERATORS: tuple[str, ...] = ("cmp", "negate", "const", "delete", "code", "boolop", "return")

# Comparison flips: the ordering operators move their boundary, the others are negated.
_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
    ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}
_SYMBOL: dict[type[ast.cmpop], str] = {
    ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
    ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not",
}
# Statements whose deletion (replaced by ``pass``) is a plausible slip.
_DELETABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.Raise, ast.If, ast.Continue, ast.Break)


@dataclass(frozen=True, slots=True)
class Point:
    """One mutation: its number in the module, operator, line, and what it changes."""

    index: int
    operator: str
    line: int
    description: str
    # The innermost function around it, as (first line of its code object, name): a case that
    # never calls it cannot see the change. None: module or class level (every case imports it).
    scope: tuple[int, str] | None = None


Apply = Callable[[], None]


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _skipped_block(stmt: ast.stmt) -> bool:
    """``if TYPE_CHECKING:``, ``if __name__ == "__main__":`` and ``__all__ = [...]``."""
    if isinstance(stmt, ast.If):
        text = ast.unparse(stmt.test)
        return "TYPE_CHECKING" in text or "__name__" in text
    if isinstance(stmt, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets)
    return isinstance(stmt, ast.Import | ast.ImportFrom)


def _worth_deleting(stmt: ast.stmt) -> bool:
    """An assignment is deleted only where the program still runs without it: a rebinding
    (``x = f(x)``) or a store into a container or attribute. Deleting the first binding of a
    name only raises NameError, which says nothing about the cases."""
    if not isinstance(stmt, ast.Assign):
        return True
    for target in stmt.targets:
        if isinstance(target, ast.Attribute | ast.Subscript):
            return True
        if isinstance(target, ast.Name) and any(
            isinstance(n, ast.Name) and n.id == target.id for n in ast.walk(stmt.value)
        ):
            return True
    return False


def error_codes(errors_source: str) -> list[str]:
    """The members of ``class Code`` in _errors.py, in catalog order (the code swap takes the
    next one: usually a code of the same phase)."""
    for node in ast.parse(errors_source).body:
        if isinstance(node, ast.ClassDef) and node.name == "Code":
            return [t.id for stmt in node.body if isinstance(stmt, ast.Assign)
                    for t in stmt.targets if isinstance(t, ast.Name)]
    raise ValueError("no class Code in _errors.py")


class _Walker:
    """Collects (point, apply) pairs in a fixed order; ``apply`` edits the tree in place."""

    def __init__(self, codes: Sequence[str]) -> None:
        self.codes = list(codes)
        self.found: list[tuple[str, int, str, Apply, tuple[int, str] | None]] = []
        self.scope: tuple[int, str] | None = None

    def add(self, operator: str, node: ast.AST, description: str, apply: Apply) -> None:
        self.found.append((operator, getattr(node, "lineno", 0), description, apply, self.scope))

    # -- statements --------------------------------------------------------------------------
    def body(self, stmts: list[ast.stmt]) -> None:
        for position, stmt in enumerate(stmts):
            if _is_docstring(stmt) or _skipped_block(stmt):
                continue
            if isinstance(stmt, _DELETABLE) and _worth_deleting(stmt):
                self._deletion(stmts, position, stmt)
            self.statement(stmt)

    def _deletion(self, stmts: list[ast.stmt], position: int, stmt: ast.stmt) -> None:
        def apply() -> None:
            stmts[position] = ast.copy_location(ast.Pass(), stmt)

        first = ast.unparse(stmt).splitlines()[0]
        self.add("delete", stmt, f"delete `{first[:70]}`", apply)

    def statement(self, stmt: ast.stmt) -> None:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
            outer = self.scope
            # co_firstlineno of a decorated function is its first decorator's line. A default
            # value is evaluated once, but only a call of the function can use it.
            first = min([stmt.lineno, *(d.lineno for d in stmt.decorator_list)])
            self.scope = (first, stmt.name)
            for default in [*stmt.args.defaults, *stmt.args.kw_defaults]:
                if default is not None:
                    self.expr(default)
            self.body(stmt.body)
            self.scope = outer
            return
        if isinstance(stmt, ast.ClassDef):
            self.body(stmt.body)
            return
        if isinstance(stmt, ast.If | ast.While):
            self._negation(stmt, "test")
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            self._return(stmt)
        for name, value in ast.iter_fields(stmt):
            if name in ("annotation", "returns", "type_comment"):
                continue
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self.body(value)
            elif isinstance(value, list):
                for item in value:
                    self._child(item)
            else:
                self._child(value)

    def _child(self, value: object) -> None:
        if isinstance(value, ast.expr):
            self.expr(value)
        elif isinstance(value, ast.excepthandler | ast.match_case):
            for stmt_list in (getattr(value, "body", []),):
                self.body(stmt_list)
        elif isinstance(value, ast.withitem):
            self.expr(value.context_expr)
        elif isinstance(value, ast.comprehension):
            self.expr(value.iter)
            for condition in value.ifs:
                self.expr(condition)

    def _negation(self, node: ast.If | ast.While | ast.IfExp, field: str) -> None:
        test = getattr(node, field)

        def apply() -> None:
            setattr(node, field, ast.UnaryOp(op=ast.Not(), operand=test))

        self.add("negate", node, f"negate `{ast.unparse(test)[:70]}`", apply)

    def _return(self, stmt: ast.Return) -> None:
        value = stmt.value
        assert value is not None
        if isinstance(value, ast.Constant) and isinstance(value.value, bool):
            new: ast.expr = ast.Constant(value=not value.value)
        elif isinstance(value, ast.Constant) and value.value is None:
            return
        else:
            new = ast.Constant(value=None)

        def apply() -> None:
            stmt.value = new

        self.add("return", stmt, f"`return {ast.unparse(value)[:50]}` -> `return "
                 f"{ast.unparse(new)}`", apply)

    # -- expressions -------------------------------------------------------------------------
    def expr(self, node: ast.expr) -> None:
        if isinstance(node, ast.JoinedStr):  # f-strings: diagnostic texts, never behaviour
            return
        self._expression_points(node)
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child)
            elif isinstance(child, ast.comprehension):
                self._child(child)

    def _expression_points(self, node: ast.expr) -> None:
        if isinstance(node, ast.Compare):
            for position, op in enumerate(node.ops):
                self._flip(node, position, op)
        elif isinstance(node, ast.BoolOp):
            self._boolop(node)
        elif isinstance(node, ast.IfExp):
            self._negation(node, "test")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self._drop_not(node)
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            self._off_by_one(node, +1)
            self._off_by_one(node, -1)
        elif isinstance(node, ast.Attribute) and self._is_code(node):
            self._swap_code(node)

    def _flip(self, node: ast.Compare, position: int, op: ast.cmpop) -> None:
        new = _FLIP[type(op)]

        def apply() -> None:
            node.ops[position] = new()

        self.add("cmp", node, f"`{_SYMBOL[type(op)]}` -> `{_SYMBOL[new]}` in "
                 f"`{ast.unparse(node)[:60]}`", apply)

    def _boolop(self, node: ast.BoolOp) -> None:
        new: ast.boolop = ast.Or() if isinstance(node.op, ast.And) else ast.And()

        def apply() -> None:
            node.op = new

        word = "and" if isinstance(node.op, ast.And) else "or"
        self.add("boolop", node, f"`{word}` swapped in `{ast.unparse(node)[:60]}`", apply)

    def _drop_not(self, node: ast.UnaryOp) -> None:
        def apply() -> None:
            node.op = _Identity()

        self.add("negate", node, f"drop `not` in `{ast.unparse(node)[:60]}`", apply)

    def _off_by_one(self, node: ast.Constant, delta: int) -> None:
        old = node.value
        assert isinstance(old, int)

        def apply() -> None:
            node.value = old + delta

        self.add("const", node, f"`{old}` -> `{old + delta}`", apply)

    def _is_code(self, node: ast.Attribute) -> bool:
        return (isinstance(node.value, ast.Name) and node.value.id == "Code"
                and node.attr in self.codes)

    def _swap_code(self, node: ast.Attribute) -> None:
        old = node.attr
        new = self.codes[(self.codes.index(old) + 1) % len(self.codes)]

        def apply() -> None:
            node.attr = new

        self.add("code", node, f"`Code.{old}` -> `Code.{new}`", apply)


class _Identity(ast.unaryop):
    """``not x`` with its ``not`` dropped: unparsed as ``+x`` would change the value, so the
    node is rewritten to its operand by :class:`_DropIdentity` before unparsing."""


class _DropIdentity(ast.NodeTransformer):
    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        self.generic_visit(node)
        return node.operand if isinstance(node.op, _Identity) else node


def _walk(tree: ast.Module, codes: Sequence[str]
          ) -> list[tuple[str, int, str, Apply, tuple[int, str] | None]]:
    walker = _Walker(codes)
    walker.body(tree.body)
    return walker.found


def points(source: str, codes: Sequence[str]) -> list[Point]:
    """Every mutation point of a module's source, numbered from 0."""
    found = _walk(ast.parse(source), codes)
    return [Point(i, op, line, text, scope)
            for i, (op, line, text, _apply, scope) in enumerate(found)]


def mutate(source: str, index: int, codes: Sequence[str]) -> str:
    """The module's source with point ``index`` applied (comments and layout are lost)."""
    tree = ast.parse(source)
    found = _walk(tree, codes)
    found[index][3]()
    tree = _DropIdentity().visit(tree)
    return ast.unparse(ast.fix_missing_locations(tree))
