"""SQL is built only with parameters: the code of bot/, workers/ and schema/ is parsed (`ast`), and
wherever a string that reads as SQL is composed (an f-string, `%`, `.format`, `+`), or any
composed string is handed to `execute`, `executemany`, `fetch*`, `read`, `cursor` and the like,
each piece put into it must be something no input can reach:

- a literal, or a module constant (an UPPER_CASE name: set once, at import, from literals);
- `int(...)`/`len(...)` (digits only), a constant's own methods (`_COLUMNS.split(",")`), a join
  of such pieces (`",".join("?" for _ in ids)`: one placeholder per value);
- a local variable assigned once in the same function from such a piece;
- a call to one of `COMPOSERS`, each named with why it is safe (its own body is checked too);
- a name in `ALLOWED`, per file and function, each with its reason;
- psycopg's `sql.SQL(...).format(...)`, which quotes identifiers and passes values as literals.

A new f-string that puts a value into SQL fails here. So does an `ALLOWED` entry that no longer
matches anything (the list stays as narrow as the code). The scanner is also run over small bad
and good snippets, so that this test is seen to fail."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("bot", "workers", "schema")
# Upper-case keywords, as this code base writes SQL; prose and log lines do not read as SQL.
SQL = re.compile(
    r"\b(?:SELECT|INSERT\s+INTO|UPDATE|DELETE\s+FROM|WHERE|VALUES|PRAGMA|VACUUM|CREATE|ALTER|DROP|JOIN"
    r"|ORDER\s+BY|GROUP\s+BY|LIMIT|NOT\s+IN|RETURNING|ON\s+CONFLICT|AND|OR|SET|IN\s*\()(?:\b|(?<=\())"
)
SINKS = frozenset(
    "execute executemany executescript execute_fetchall fetch fetchrow fetchval fetchone fetchall fetchmany"
    " read cursor copy stream".split()
)
SAFE_CALLS = frozenset({"int", "len", "float"})
CONSTANT = re.compile(r"^_?[A-Z][A-Z0-9_]*$")
COMPOSERS = {
    "recallable": "bot/store/sql/rows.py: the status and kind conditions from the core's fixed sets; "
    "its argument is a column name written in the query",
    "select_list": "bot/store/sql/rows.py: `alias.column` for columns of a fixed tuple",
    "_kinds_left_out": "bot/store/sqlite/memories.py: ' AND m.kind NOT IN (?,…)', one parameter a kind",
}
ALLOWED = {
    ("bot/store/sqlite/curation.py", "revise_memory", "column"): "revision_changes returns only "
    "columns of its own fixed set (rows.py); every value is a parameter",
    ("bot/store/sql/rows.py", "recallable", "column"): "a composer (see COMPOSERS): every caller passes "
    "a column name written in its query",
    ("bot/store/sql/rows.py", "recallable", "kind"): "the same column name with its status suffix "
    "replaced by kind",
    ("bot/store/sqlite/db.py", "migrate", "step.sql"): "a migration: the text of a file in "
    "schema/sqlite/, shipped with the code, never input",
    # fts_match writes an FTS5 query, not SQL: it is bound to `MATCH ?` as a parameter.
    ("bot/store/sqlite/memories.py", "fts_match", "user_tag(user_id)"): "the person's FTS5 tag, "
    "a hex digest of their id",
    ("bot/store/sqlite/memories.py", "fts_match", "either"): "the search words, each an FTS5 "
    "phrase in double quotes with its quotes doubled (query_terms gives \\w+ words only)",
}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    function: str
    piece: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line} in {self.function}: {self.piece}"


def reads_as_sql(node: ast.AST, strings: dict[str, str]) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(SQL.search(node.value))
    if isinstance(node, ast.JoinedStr):
        return bool(SQL.search("".join(v.value for v in node.values if isinstance(v, ast.Constant))))
    if isinstance(node, ast.Name):
        return bool(SQL.search(strings.get(node.id, "")))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return reads_as_sql(node.left, strings) or reads_as_sql(node.right, strings)
    return False


class Scanner(ast.NodeVisitor):
    def __init__(self, path: str, tree: ast.Module) -> None:
        self.path = path
        self.findings: list[Finding] = []
        self.checked = 0  # pieces put into SQL that were judged
        self.used: set[tuple[str, str, str]] = set()
        # Module-level strings, so that `_GET_SQL.format(...)` is known to format SQL.
        self.strings = {
            target.id: _literal(node.value)
            for node in tree.body
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        self.function = "<module>"
        self.locals: dict[str, list[ast.expr | None]] = {}
        self.bound: set[str] = set()  # comprehension variables over safe iterables

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer = (self.function, self.locals)
        self.function, self.locals = node.name, _assignments(node)
        self.generic_visit(node)
        self.function, self.locals = outer

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_GeneratorExp(self, node: ast.GeneratorExp | ast.ListComp | ast.SetComp) -> None:
        """Inside a comprehension, a variable over a safe iterable (`for name in KEPT_TABLES`) is safe."""
        before = set(self.bound)
        for generator in node.generators:
            self.visit(generator.iter)
            if self.safe(generator.iter, depth=0):
                self.bound |= {n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)}
            for condition in generator.ifs:
                self.visit(condition)
        self.visit(node.elt)
        self.bound = before

    visit_ListComp = visit_SetComp = visit_GeneratorExp  # type: ignore[assignment]

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        """`sql += piece`: the piece is put into SQL when what it is added to reads as SQL."""
        if isinstance(node.op, ast.Add) and isinstance(node.target, ast.Name):
            earlier = [v for v in self.locals.get(node.target.id, []) if v is not None]
            grows_sql = any(reads_as_sql(value, self.strings) for value in earlier)
            if grows_sql and not isinstance(node.value, ast.Constant | ast.JoinedStr):
                self.require(node.value)
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        if reads_as_sql(node, self.strings):
            for value in node.values:
                if isinstance(value, ast.FormattedValue):
                    self.require(value.value)
        self.generic_visit(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.Mod) and reads_as_sql(node.left, self.strings):
            for piece in node.right.elts if isinstance(node.right, ast.Tuple) else [node.right]:
                self.require(piece)
        if isinstance(node.op, ast.Add) and reads_as_sql(node, self.strings):
            for piece in _added(node):
                if not isinstance(piece, ast.Constant | ast.JoinedStr):
                    self.require(piece)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        formats = isinstance(func, ast.Attribute) and func.attr == "format" and not _psycopg_sql(func.value)
        if formats and isinstance(func, ast.Attribute) and reads_as_sql(func.value, self.strings):
            for piece in [*node.args, *(keyword.value for keyword in node.keywords)]:
                self.require(piece)
        if isinstance(func, ast.Attribute) and func.attr in SINKS and node.args:
            first = node.args[0]
            if isinstance(first, ast.JoinedStr):
                for value in first.values:
                    if isinstance(value, ast.FormattedValue):
                        self.require(value.value)
            elif isinstance(first, ast.BinOp) and _is_text(first):
                for piece in _added(first) if isinstance(first.op, ast.Add) else [first.right]:
                    if not isinstance(piece, ast.Constant):
                        self.require(piece)
        self.generic_visit(node)

    def require(self, piece: ast.expr) -> None:
        self.checked += 1
        found = Finding(self.path, piece.lineno, self.function, ast.unparse(piece))
        if not self.safe(piece, depth=0) and found not in self.findings:
            self.findings.append(found)

    def safe(self, node: ast.expr, depth: int) -> bool:
        if depth > 8:
            return False
        if (key := (self.path, self.function, ast.unparse(node))) in ALLOWED:
            self.used.add(key)
            return True
        match node:
            case ast.Constant():
                return True
            case ast.Name(id=name):
                return self.safe_name(name, depth)
            case ast.Attribute(attr=attr):
                return bool(CONSTANT.match(attr))  # statements.FORGOTTEN_TABLES
            case ast.JoinedStr(values=values):
                return all(self.safe(v.value, depth + 1) for v in values if isinstance(v, ast.FormattedValue))
            case ast.BinOp(left=left, right=right):
                return self.safe(left, depth + 1) and self.safe(right, depth + 1)
            case ast.IfExp(body=body, orelse=orelse):
                return self.safe(body, depth + 1) and self.safe(orelse, depth + 1)
            case ast.GeneratorExp() | ast.ListComp() | ast.SetComp():
                return self.safe_comprehension(node, depth)
            case ast.Call(func=ast.Name(id=name)) if name in SAFE_CALLS or name in COMPOSERS:
                return True
            case ast.Call(func=ast.Attribute(value=owner), args=args):
                # A method of a safe value (str.join, str.split, str.strip) with safe arguments.
                return self.safe(owner, depth + 1) and all(self.safe(arg, depth + 1) for arg in args)
            case ast.Tuple(elts=elts) | ast.List(elts=elts):
                return all(self.safe(elt, depth + 1) for elt in elts)
        return False

    def safe_name(self, name: str, depth: int) -> bool:
        if CONSTANT.match(name) or name in self.bound:
            return True
        values = self.locals.get(name, [])
        return len(values) == 1 and values[0] is not None and self.safe(values[0], depth + 1)

    def safe_comprehension(self, node: ast.GeneratorExp | ast.ListComp | ast.SetComp, depth: int) -> bool:
        added: set[str] = set()
        for generator in node.generators:
            names = {n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)}
            iterable_safe = self.safe(generator.iter, depth + 1)
            for name in names:
                if iterable_safe or (self.path, self.function, name) in ALLOWED:
                    if not iterable_safe:
                        self.used.add((self.path, self.function, name))
                    added.add(name)
        before = set(self.bound)
        self.bound |= added
        try:
            return self.safe(node.elt, depth + 1)
        finally:
            self.bound = before


def _literal(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant))
    return ""


def _assignments(function: ast.FunctionDef | ast.AsyncFunctionDef) -> dict[str, list[ast.expr | None]]:
    """Each local name's assigned values; None for an argument, an augmented or unpacked one."""
    found: dict[str, list[ast.expr | None]] = {}
    for argument in [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]:
        found.setdefault(argument.arg, []).append(None)
    for node in ast.walk(function):
        if isinstance(node, ast.Assign):
            pairs = [(target, node.value) for target in node.targets]
        elif isinstance(node, ast.AnnAssign | ast.NamedExpr):
            pairs = [(node.target, node.value)]
        elif isinstance(node, ast.AugAssign | ast.For | ast.AsyncFor):
            pairs = [(node.target, None)]
        elif isinstance(node, ast.With | ast.AsyncWith):
            pairs = [(item.optional_vars, None) for item in node.items if item.optional_vars is not None]
        else:
            continue
        for target, value in pairs:
            for name in (n for n in ast.walk(target) if isinstance(n, ast.Name)):
                found.setdefault(name.id, []).append(value if target is name else None)
    return found


def _is_text(node: ast.BinOp) -> bool:
    """String concatenation or %-formatting: a text part (`quota + 1025` is arithmetic)."""
    parts = list(_added(node)) if isinstance(node.op, ast.Add) else [node.left]
    return isinstance(node.op, ast.Add | ast.Mod) and any(
        isinstance(part, ast.JoinedStr) or (isinstance(part, ast.Constant) and isinstance(part.value, str))
        for part in parts
    )


def _added(node: ast.expr) -> Iterator[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        yield from _added(node.left)
        yield from _added(node.right)
    else:
        yield node


def _psycopg_sql(node: ast.expr) -> bool:
    """`sql.SQL("…")` (or `.join` of such): psycopg composes it with quoted identifiers."""
    call = node.func if isinstance(node, ast.Call) else None
    return isinstance(call, ast.Attribute) and call.attr in {"SQL", "join"} and "sql" in ast.unparse(call)


def scan(source: str, path: str = "snippet.py") -> Scanner:
    tree = ast.parse(source)
    scanner = Scanner(path, tree)
    scanner.visit(tree)
    return scanner


def scanned_files() -> list[Path]:
    return sorted(p for folder in SCANNED for p in (ROOT / folder).rglob("*.py"))


def test_sql_in_the_code_is_built_only_with_parameters() -> None:
    findings: list[Finding] = []
    used: set[tuple[str, str, str]] = set()
    checked = 0
    for path in scanned_files():
        scanner = scan(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
        findings += scanner.findings
        used |= scanner.used
        checked += scanner.checked
    assert checked > 60  # the stores compose SQL from constants in many places: all were judged
    assert not findings, "SQL composed from values that are not constants:\n" + "\n".join(map(str, findings))
    assert used == set(ALLOWED), f"allow-list entries that match nothing any more: {set(ALLOWED) - used}"


def test_the_composers_it_trusts_exist_and_compose_only_constants_and_placeholders() -> None:
    defined = {
        node.name: path
        for path in scanned_files()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef)
    }
    for name, reason in COMPOSERS.items():
        assert name in defined and str(defined[name].relative_to(ROOT)) in reason, name


BAD = {
    "an f-string": 'async def f(db, user_id):\n    await db.execute(f"SELECT * FROM t WHERE id = {user_id}")',
    "an f-string kept first": "def f(name):\n    sql = f\"DELETE FROM t WHERE u = '{name}'\"\n    return sql",
    "%": "def f(db, x):\n    return db.execute(\"SELECT * FROM t WHERE a = '%s'\" % x)",
    "% with a tuple": 'def f(x, y):\n    return "UPDATE t SET a = %s WHERE b = %s" % (x, y)',
    ".format": 'def f(db, x):\n    return db.execute("SELECT * FROM t WHERE a = {}".format(x))',
    ".format of a constant": 'Q = "SELECT * FROM t WHERE a = {a}"\ndef f(x):\n    return Q.format(a=x)',
    "+": 'def f(db, x):\n    return db.execute("SELECT * FROM t WHERE a = " + x)',
    "+ reaching a sink": 'def f(db, table):\n    return db.execute("SELECT count(*) FROM " + table)',
    "an f-string into a sink": 'async def f(db, column):\n    await db.read(f"{column}", ())',
    "a local from input": 'def f(text):\n    where = text.strip()\n    return f"SELECT 1 FROM t WHERE {where}"',  # noqa: E501
    "+= of a value": 'def f(db, x):\n    sql = "SELECT 1 FROM t WHERE a = 1"\n    sql += x\n    db.execute(sql)',  # noqa: E501
    "an f-string condition": "def f(x):\n    return f\" AND kind = '{x}'\"",
    "a join of input": "def f(names):\n    return f\"SELECT {', '.join(names)} FROM t\"",
}
GOOD = {
    "parameters": 'async def f(db, x):\n    await db.execute("SELECT * FROM t WHERE a = ?", (x,))',
    "placeholders": 'def f(ids):\n    marks = ",".join("?" for _ in ids)\n    return f"SELECT 1 FROM t WHERE id IN ({marks})"',  # noqa: E501
    "constants": '_COLUMNS = "a, b"\nSQL = f"SELECT {_COLUMNS} FROM t WHERE a = ?"',
    "prose": 'def f(name):\n    return f"Hello {name}, where are you?"',
    "psycopg": 'def f(col):\n    return sql.SQL("SELECT {} FROM t").format(sql.Identifier(col))',
}


def test_a_value_put_into_the_stores_own_sql_is_found() -> None:
    path = "bot/store/sqlite/memories.py"
    source = (ROOT / path).read_text(encoding="utf-8")
    assert not scan(source, path).findings
    for old, new in [("IN ({marks})", "IN ({', '.join(map(str, ids))})"), ("?{_kinds_left_out(", "?{str(")]:
        assert old in source
        assert scan(source.replace(old, new, 1), path).findings, new


@pytest.mark.parametrize("case", sorted(BAD))
def test_the_scanner_finds_sql_built_from_values(case: str) -> None:
    assert scan(BAD[case]).findings, case


@pytest.mark.parametrize("case", sorted(GOOD))
def test_the_scanner_passes_sql_built_with_parameters(case: str) -> None:
    assert not scan(GOOD[case]).findings, case
