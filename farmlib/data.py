"""The real data files in the Alpaca schema: AlpacaFarm splits, AlpacaEval outputs and annotations.

Every record is a dict with ``instruction``, ``input`` (often empty) and, where there is one,
``output``. FarmWorld's offline splits, in the same schema, are :mod:`farmlib.world.splits`.
"""

from __future__ import annotations

import json
from pathlib import Path

SPLITS = ("sft", "preference", "unlabeled", "val", "eval")
HF_DATASET = "tatsu-lab/alpaca_farm"


class DataFormatError(ValueError):
    """A data file that does not have the fields we need."""


def load_records(path: str | Path, required: tuple[str, ...] = ("instruction",)) -> list[dict]:
    """Read a JSON list of records, checking that each has the ``required`` fields.

    Raises ``DataFormatError`` with one line naming the file, the record and the field.
    Records without ``input`` get ``input=""`` (AlpacaEval folds the input into the instruction).
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise DataFormatError(f"{path}: no such file") from None
    except json.JSONDecodeError as e:
        raise DataFormatError(f"{path}: not valid JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(data, list):
        raise DataFormatError(f"{path}: expected a JSON list of records, got {type(data).__name__}")
    records = []
    for i, rec in enumerate(data):
        if not isinstance(rec, dict):
            raise DataFormatError(f"{path}: record {i}: expected an object, got {type(rec).__name__}")
        for f in required:
            if f not in rec:
                raise DataFormatError(f"{path}: record {i}: missing field {f!r}")
        for f in ("instruction", "input"):
            if f in rec and rec[f] is not None and not isinstance(rec[f], str):
                raise DataFormatError(f"{path}: record {i}: field {f!r} must be a string")
        rec = dict(rec)
        rec["input"] = rec.get("input") or ""
        records.append(rec)
    return records


def load_alpaca_farm(split: str, path: str | Path | None = None) -> list[dict]:
    """The real AlpacaFarm data for ``split`` (sft, preference, unlabeled, val, eval).

    With ``path``, read a local JSON file in the released format; otherwise load
    ``tatsu-lab/alpaca_farm`` with ``datasets`` (needs the hub).
    """
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {SPLITS}")
    if path is not None:
        recs = load_records(path, required=("instruction",))
    else:  # pragma: no cover - needs the network
        import datasets

        if split == "eval":
            ds = datasets.load_dataset(HF_DATASET, "alpaca_farm_evaluation", split="eval")
        else:
            ds = datasets.load_dataset(HF_DATASET, "alpaca_instructions", split=split)
        recs = [dict(r, input=r.get("input") or "") for r in ds]
    for r in recs:
        r.setdefault("datasplit", split)
    return recs


def load_model_outputs(path: str | Path) -> list[dict]:
    """An AlpacaEval ``model_outputs.json``: records with instruction, output and generator."""
    return load_records(path, required=("instruction", "output", "generator"))
