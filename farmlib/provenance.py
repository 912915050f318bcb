"""Which source an artifact is built from: a digest of the code, so that artifacts follow their code.

An artifact's key (:mod:`farmlib.artifacts`) is its config, the keys or contents of its inputs, and the digest
of the farmlib source its builder can run (:func:`code_digest`):

- in the builder's own module, the function that defines the builder and every function, method and class of
  that module it names (``load_model(...)``, ``self.splits()``), transitively, with the module's top-level
  statements (constants, imports); functions that only compute keys (:data:`KEYS_ONLY`) are not followed;
- beyond it, every farmlib module those import (at the top or inside a reached function), whole, and what
  those import in turn, anywhere in them.

So editing ``methods/ppo.py`` changes the key of PPO's artifacts (and, through their paths, of everything
built from them) and of nothing else. The source is read as tokens without comments, docstrings or layout:
a comment, a docstring or a reflowed line changes no key (they say why, not what is built); any other edit
does, even one that changes no number, since whether it does is what a rebuild would have to find out.

Not followed (:data:`NOT_CODE`): the modules that store, show or configure artifacts without deciding
what they hold. A package's ``__init__`` counts only where a name is imported from it.
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import io
import tokenize
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

PACKAGE = "farmlib"

#: Modules that never decide what an artifact holds, each for one reason.
NOT_CODE = {
    "farmlib.artifacts": "where and how artifacts are stored, not what they hold",
    "farmlib.provenance": "computes the keys themselves",
    "farmlib.progress": "progress bars and status lines only",
    "farmlib.profiles": "its values enter the keys themselves (a config's fields, a profile's sizes)",
    "farmlib.book": "builds the book from artifacts, builds none",
    "farmlib.cli": "the command line, builds none",
}

#: Functions and methods that compute keys (their results enter the key as values) and build nothing
#: themselves: a builder that names them does not run them for what it builds.
KEYS_ONLY = {"artifact", "key", "data_key", "judges_key", "people_key", "crowd_key", "get_or_build"}


@dataclass
class _Module:
    name: str
    tree: ast.Module
    tokens: list[tuple[int, str]]  # (start row, token text) without comments, docstrings or layout
    units: dict[str, ast.AST] = field(default_factory=dict)  # "f", "Class", "Class.method" -> node
    rows: dict[str, tuple[int, int]] = field(default_factory=dict)  # unit -> (first row, last row)

    def text(self, rows: list[tuple[int, int]] | None = None, skip: list[tuple[int, int]] = ()) -> str:
        """The module's tokens (``rows``: only those inside these row ranges; ``skip``: not those inside)."""
        def inside(r, ranges):
            return any(a <= r <= b for a, b in ranges)

        return " ".join(t for r, t in self.tokens
                        if (rows is None or inside(r, rows)) and not inside(r, skip))


def _module_file(name: str) -> Path | None:
    """A module's source file, found without importing it (nor its package, which may import torch)."""
    top, *rest = name.split(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):  # __main__ (a notebook's cell, a script)
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    base = Path(spec.origin).parent if spec.submodule_search_locations else None
    if not rest:
        return Path(spec.origin)
    if base is None:
        return None
    for candidate in (base.joinpath(*rest).with_suffix(".py"), base.joinpath(*rest, "__init__.py")):
        if candidate.is_file():
            return candidate
    return None


def _docstring_rows(tree: ast.Module) -> set[int]:
    rows = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                rows.add((first.lineno, first.col_offset))
    return rows


@cache
def _load(name: str) -> _Module | None:
    path = _module_file(name)
    if path is None:
        return None
    src = path.read_text()
    tree = ast.parse(src)
    doc = _docstring_rows(tree)
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
    tokens = [(t.start[0], t.string or tokenize.tok_name[t.type])
              for t in tokenize.generate_tokens(io.StringIO(src).readline)
              if t.type not in skip and not (t.type == tokenize.STRING and t.start in doc)]
    mod = _Module(name, tree, tokens)

    def first_row(node):
        return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            mod.units[node.name] = node
            mod.rows[node.name] = (first_row(node), node.end_lineno)
        if isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    mod.units[f"{node.name}.{sub.name}"] = sub
                    mod.rows[f"{node.name}.{sub.name}"] = (first_row(sub), sub.end_lineno)
    return mod


def _imports(name: str, nodes) -> set[str]:
    """The farmlib modules imported by the import statements among ``nodes`` (a statement list or ast.walk),
    as written in module ``name``."""
    out = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".")
                is_pkg = (_module_file(name) or Path()).name == "__init__.py"
                pkg = pkg[: len(pkg) - node.level + (1 if is_pkg else 0)]
                base = ".".join(pkg + ([node.module] if node.module else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.add(sub if _module_file(sub) is not None else base)  # a submodule, or a name of the package
    return {m for m in out if (m == PACKAGE or m.startswith(PACKAGE + ".")) and m not in NOT_CODE}


def _reached_units(mod: _Module, start: str) -> set[str]:
    """``start`` and the units of ``mod`` it names, transitively: a bare name (a function or class of the
    module) or an attribute (a method of one of its classes: ``self.splits``, ``farm.key``)."""
    methods: dict[str, list[str]] = {}
    for u in mod.units:
        if "." in u:
            methods.setdefault(u.split(".", 1)[1], []).append(u)
    seen, todo = set(), [start]
    while todo:
        u = todo.pop()
        if u in seen or u not in mod.units:
            continue
        seen.add(u)
        node = mod.units[u]
        body = ([s for s in node.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
                if isinstance(node, ast.ClassDef) else [node])
        if isinstance(node, ast.ClassDef):  # a class named: its fields and how it is made
            todo += [f"{u}.__init__", f"{u}.__post_init__"]
        for stmt in body:
            for n in ast.walk(stmt):
                if isinstance(n, ast.Name) and n.id in mod.units and n.id not in KEYS_ONLY:
                    todo.append(n.id)
                elif isinstance(n, ast.Attribute) and n.attr not in KEYS_ONLY:
                    todo += methods.get(n.attr, [])
    return seen


def _unit_text(mod: _Module, unit: str) -> str:
    """A unit's tokens; a class's without its methods' (each method is a unit of its own)."""
    inner = [r for u, r in mod.rows.items() if u.startswith(unit + ".")]
    return mod.text(rows=[mod.rows[unit]], skip=inner)


@cache
def _module_closure(name: str) -> frozenset[str]:
    """``name`` and every farmlib module it imports anywhere in it, transitively."""
    seen, todo = set(), [name]
    while todo:
        m = todo.pop()
        if m in seen or m in NOT_CODE:
            continue
        mod = _load(m)
        if mod is None:
            continue
        seen.add(m)
        todo += sorted(_imports(m, ast.walk(mod.tree)))
    return frozenset(seen)


def outer_function(qualname: str) -> str:
    """The module-level function (or ``Class.method``) that defines a nested function: ``Farm.sft_model``
    for ``Farm.sft_model.<locals>.build``."""
    return qualname.split(".<locals>", 1)[0]


@cache
def source_digest(module: str, function: str) -> tuple[str, tuple[str, ...]]:
    """(digest, the modules it covers) of the code that ``function`` of ``module`` can run (see the module's
    docstring). A module outside farmlib (a test's builder) counts by its own source only."""
    mod = _load(module)
    if mod is None:
        return hashlib.sha256(f"{module}:{function}".encode()).hexdigest()[:16], ()
    if function not in mod.units:
        raise ValueError(f"{module} has no module-level function or method {function!r}")
    units = sorted(_reached_units(mod, function))
    top_level = [s for s in mod.tree.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    imported = _imports(module, top_level)
    for u in units:
        node = mod.units[u]
        imported |= _imports(module, ast.walk(node) if not isinstance(node, ast.ClassDef) else
                             [n for s in node.body if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                              for n in ast.walk(s)])
    others = sorted(set().union(*[_module_closure(m) for m in imported]) - {module}) if imported else []
    h = hashlib.sha256()
    own = mod.text(skip=list(mod.rows.values())) + "\n" + "\n".join(f"{u}: {_unit_text(mod, u)}" for u in units)
    h.update(f"{module}\n{own}\n".encode())
    for m in others:
        h.update(f"{m}\n{_load(m).text()}\n".encode())
    return h.hexdigest()[:16], (f"{module}:{','.join(units)}", *others)


def code_digest(build) -> tuple[str, tuple[str, ...]]:
    """(digest, modules) of the code a builder (a function, usually a closure) can run."""
    return source_digest(build.__module__, outer_function(build.__qualname__))


def modules_digest(*modules: str) -> str:
    """The digest of whole modules and what they import, transitively (for what is not one builder: the
    judges, the people)."""
    h = hashlib.sha256()
    for m in sorted(set().union(*[_module_closure(m) for m in modules])):
        h.update(f"{m}\n{_load(m).text()}\n".encode())
    return h.hexdigest()[:16]


def data_digest(obj) -> str:
    """A digest of JSON-able data a builder reads that is not an artifact path (training pairs, prompts)."""
    import json

    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:16]
