"""The real data files in the Alpaca schema: AlpacaFarm splits, AlpacaEval outputs and annotations.

Every record is a dict with ``instruction``, ``input`` (often empty) and, where there is one,
``output``. FarmWorld's offline splits, in the same schema, are :mod:`farmlib.world.splits`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

SPLITS = ("sft", "preference", "unlabeled", "val", "eval")
HF_DATASET = "tatsu-lab/alpaca_farm"
#: The hub revision read by default. A branch, not a commit: we could not look up a commit hash
#: offline. Pass ``revision=<commit>`` (or pin it here) for a byte-identical rerun.
HF_REVISION = "main"
#: Each split's released JSON file, by its path in the hub repository. We read the files themselves:
#: the repository's loading script is refused by ``datasets`` >= 4 ("Dataset scripts are no longer supported").
SPLIT_FILES = {
    "sft": "alpaca_instructions/sft.json",
    "preference": "alpaca_instructions/preference.json",
    "unlabeled": "alpaca_instructions/unlabeled.json",
    "val": "alpaca_instructions/val.json",
    "eval": "alpaca_farm_evaluation.json",
}
#: The fields every record of a split must have (SFT trains on the demonstrations).
REQUIRED = {s: ("instruction", "output") if s == "sft" else ("instruction",) for s in SPLITS}


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


def load_split_file(path: str | Path, split: str) -> list[dict]:
    """One split's records from a local JSON file in the released format, checked (``DataFormatError``
    naming the file, the record and the missing field) and tagged with ``datasplit``."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {SPLITS}")
    recs = load_records(path, required=REQUIRED[split])
    for r in recs:
        r.setdefault("datasplit", split)
    return recs


def alpaca_farm_file(split: str, folder: str | Path | None = None, revision: str = HF_REVISION) -> Path:
    """The released file of ``split``: under ``folder`` (a local copy with the hub's layout, see
    ``SPLIT_FILES``) or else downloaded from ``tatsu-lab/alpaca_farm`` at ``revision`` (cached)."""
    if split not in SPLITS:
        raise ValueError(f"unknown split {split!r}; choose from {SPLITS}")
    if folder is not None:
        return Path(folder) / SPLIT_FILES[split]
    from huggingface_hub import hf_hub_download

    return Path(hf_hub_download(HF_DATASET, SPLIT_FILES[split], repo_type="dataset", revision=revision))


def load_alpaca_farm(split: str, path: str | Path | None = None, folder: str | Path | None = None,
                     revision: str = HF_REVISION) -> list[dict]:
    """The real AlpacaFarm data for ``split`` (sft, preference, unlabeled, val, eval).

    From the file ``path`` if given, else from :func:`alpaca_farm_file` (a local ``folder``, or the hub
    at ``revision``).
    """
    if path is None:
        path = alpaca_farm_file(split, folder, revision)
    return load_split_file(path, split)


def load_model_outputs(path: str | Path) -> list[dict]:
    """An AlpacaEval ``model_outputs.json``: records with instruction, output and generator."""
    return load_records(path, required=("instruction", "output", "generator"))


def paired(a: list[dict], b: list[dict], same: Callable[[str], object] = str.strip,
           fields: tuple[str, ...] = ()) -> list[dict]:
    """Pairs (``output_1`` from ``a[i]``, ``output_2`` from ``b[i]``) of two answer sets to the same instructions,
    dropping the pairs whose outputs are the same under ``same`` (by default: equal but for surrounding
    whitespace). ``fields``: more fields of ``a[i]`` to carry (missing ones as "")."""
    return [{"instruction": x["instruction"], "input": x["input"], **{f: x.get(f, "") for f in fields},
             "output_1": x["output"], "output_2": y["output"]}
            for x, y in zip(a, b, strict=True) if same(x["output"]) != same(y["output"])]
