"""The Farm is a thin facade over named rooms, and nothing outside reaches into its private parts."""

import ast
from pathlib import Path

from farmlib.pipeline import Farm
from farmlib.rooms.annotators import AnnotatorRoom
from farmlib.rooms.data import DataRoom
from farmlib.rooms.models import ModelRoom

ROOT = Path(__file__).resolve().parents[1]


def test_every_facade_method_asks_its_room_and_carries_its_doc():
    asked = {name: fn.__wrapped__ for name, fn in vars(Farm).items() if hasattr(fn, "__wrapped__")}
    assert len(asked) >= 25
    for name, wrapped in asked.items():
        room = next(r for r in (DataRoom, ModelRoom, AnnotatorRoom) if vars(r).get(wrapped.__name__) is wrapped)
        assert getattr(Farm, name).__doc__ == wrapped.__doc__, name
        assert name == wrapped.__name__ or (name, wrapped.__name__) == ("data_key", "key"), name
        assert room.__module__.startswith("farmlib.rooms.")


def test_the_facade_is_short():
    assert len((ROOT / "farmlib" / "pipeline.py").read_text().splitlines()) <= 165  # "about 150": a facade, not a room


def test_no_module_outside_the_farm_uses_its_private_attributes():
    """``farm._x`` (or ``self.farm._x`` inside a room) appears nowhere outside pipeline.py, in farmlib, the
    notebooks' code, the tests and the benchmarks."""
    offenders = []
    for path in [*ROOT.glob("farmlib/**/*.py"), *ROOT.glob("benchmarks/*.py"), *ROOT.glob("tests/*.py")]:
        if path.name == "pipeline.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and (isinstance(node.value, ast.Name) and node.value.id in ("farm", "micro_farm")
                         or isinstance(node.value, ast.Attribute) and node.value.attr == "farm")):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} .{node.attr}")
    assert not offenders, offenders
