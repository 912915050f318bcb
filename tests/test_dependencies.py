"""Every module the project imports is declared in pyproject.toml, under the extra that needs it.

A fresh machine has only what we declare: an import that works here because some other package
happened to pull it in breaks the book for a new user (it happened with scipy). We read every
import in farmlib, the notebooks, the tests and the benchmarks, map modules to distributions with
the installed packages' metadata, and compare with the declared requirements.
"""

import ast
import functools
import json
import re
import sys
from importlib.metadata import packages_distributions

import pytest
from conftest import ROOT

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = None

#: The project's own modules; a benchmark may import a sibling (its folder is on ``sys.path`` when it runs).
LOCAL = {"farmlib", "conftest"} | {p.stem for p in (ROOT / "benchmarks").glob("*.py")}
#: Modules needed without an ``import`` line: (regex in the source, module, why).
INDIRECT = [(r"method\s*=\s*['\"](spearman|kendall)['\"]", "scipy", "pandas .corr(method='spearman')")]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared() -> dict[str, set[str]]:
    """{"core": {...}, extra: {...}} of normalised distribution names, read from pyproject.toml."""
    if tomllib is None:
        pytest.skip("needs Python 3.11's tomllib")
    proj = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    name = lambda req: _norm(re.match(r"[A-Za-z0-9_.\-]+", req).group(0))  # noqa: E731
    out = {"core": {name(r) for r in proj["dependencies"]}}
    for extra, reqs in proj.get("optional-dependencies", {}).items():
        out[extra] = {name(r) for r in reqs}
    return out


def _imports(source: str, top_level_only: bool = False) -> set[str]:
    tree = ast.parse(source)
    nodes = tree.body if top_level_only else ast.walk(tree)
    mods = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            mods |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            mods.add(node.module.split(".")[0])
    for pattern, module, _ in INDIRECT:
        if re.search(pattern, source):
            mods.add(module)
    return {m for m in mods if m not in sys.stdlib_module_names and m not in LOCAL and m != "__future__"}


def _notebook_source(path) -> str:
    cells = json.loads(path.read_text())["cells"]
    lines = []
    for c in cells:
        if c["cell_type"] == "code":
            lines += [ln for ln in "".join(c["source"]).splitlines() if not ln.lstrip().startswith(("%", "!"))]
    return "\n".join(lines)


@functools.cache
def _installed() -> dict[str, list[str]]:
    return packages_distributions()


def _distributions(module: str) -> set[str]:
    dists = _installed().get(module)
    return {_norm(d) for d in dists} if dists else {_norm(module)}  # not installed: its own name


def _undeclared(mods: set[str], allowed: set[str]) -> list[str]:
    return sorted(m for m in mods if not _distributions(m) & allowed)


def _sources():
    """(group, file, source, top-level-only imports) for every file whose imports we check."""
    for p in sorted((ROOT / "farmlib").rglob("*.py")):
        yield "farmlib (module level)", p, p.read_text(), True
        yield "farmlib (inside functions)", p, p.read_text(), False
    for p in sorted((ROOT / "tests").rglob("*.py")):
        yield "tests", p, p.read_text(), False
    for p in sorted((ROOT / "benchmarks").rglob("*.py")):
        yield "benchmarks", p, p.read_text(), False
    for p in sorted((ROOT / "notebooks").glob("*.ipynb")):
        yield "notebooks (book)", p, _notebook_source(p), False
        yield "notebooks (test)", p, _notebook_source(p), False


def _allowed(group: str, d: dict[str, set[str]]) -> set[str]:
    """What a user who installed as the README says has, for each kind of file."""
    everything = set().union(*d.values())
    return {
        "farmlib (module level)": d["core"],  # `import farmlib.x` must work after a plain install
        "farmlib (inside functions)": everything,  # lazy imports of optional paths (book, scale)
        "tests": d["core"] | d["test"],
        "benchmarks": d["core"] | d["test"],
        "notebooks (book)": d["core"] | d["book"],  # farm book
        "notebooks (test)": d["core"] | d["test"],  # the tests execute every chapter
    }[group]


def test_every_import_is_declared():
    declared = _declared()
    missing = []
    for group, path, source, top in _sources():
        for m in _undeclared(_imports(source, top), _allowed(group, declared)):
            missing.append(f"{path.relative_to(ROOT)} imports {m} ({group}): declare {'/'.join(_distributions(m))}")
    assert not missing, "undeclared dependencies:\n" + "\n".join(missing)


def test_sphinx_extensions_are_declared():
    """Extensions named in _config.yml come from the `book` extra."""
    text = (ROOT / "_config.yml").read_text()
    block = re.search(r"extra_extensions:\s*\[([^\]]*)\]", text)
    exts = {e.strip().strip("'\"").split(".")[0] for e in block.group(1).split(",")} if block else set()
    d = _declared()
    missing = _undeclared({e for e in exts if e}, d["core"] | d["book"])
    assert not missing, f"_config.yml uses Sphinx extensions not in the book extra: {missing}"


def test_the_check_catches_an_undeclared_import():
    """The checker itself can fail: an import of a package we never declared is reported."""
    d = _declared()
    assert _undeclared(_imports("import sympy\nfrom yaml import safe_load\n"), d["core"]) == ["sympy", "yaml"]
    assert _undeclared(_imports("df.corr(method=" + "'spearman')"), {"pandas"}) == ["scipy"]
    assert _undeclared(_imports("import numpy"), d["core"]) == []
