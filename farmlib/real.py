"""The real world behind the same chapters: real instructions, a released reference, released people.

A profile with a :class:`~farmlib.profiles.RealData` block reads its data from released files instead of
generating FarmWorld:

* **splits**: the AlpacaFarm splits from the hub (``source="alpaca_farm"``), or the 805 AlpacaEval
  instructions split deterministically into sft / preference / unlabeled / val / eval
  (``source="alpaca_eval_805"``, what ``real-micro`` reads from ``../shared/data``); each record keeps its
  ``dataset`` (self-instruct, oasst, koala, helpful_base, vicuna) and the SFT demonstrations are
  text-davinci-003's released answers (the Alpaca data was written by that model);
* **reference**: text-davinci-003's released AlpacaEval outputs (:func:`load_reference`);
* **people**: released human preference annotations where they exist (:class:`ReleasedPeople`); where
  they do not, asking for ``human`` raises :class:`NotInRealWorld`, which chapters catch and say so.

What does not exist in the real world — a true reward R*, fresh human labels, the expert writer — raises
:class:`NotInRealWorld` with one line naming what is missing; nothing silently falls back to FarmWorld.
"""

from __future__ import annotations

import random
from pathlib import Path

from farmlib.data import SPLITS, DataFormatError, load_model_outputs, load_records

#: The released AlpacaEval outputs of the reference model, under the data folder.
REFERENCE_FILE = "alpaca_eval/results/text_davinci_003/model_outputs.json"
#: Where the other released models' AlpacaEval outputs are (one folder per model).
RESULTS_DIR = "alpaca_eval/results"


class NotInRealWorld(Exception):
    """Something that exists only in FarmWorld (R*, fresh human labels, the expert writer) was asked for
    on real data. The message is one line naming it."""


def data_dir(folder: str | Path, repo_root: str | Path | None = None) -> Path:
    """The real data folder: ``folder`` as is when absolute, else relative to the repository root (the
    folder holding ``farmlib/``), so ``../shared/data`` means the same from any working directory."""
    p = Path(folder)
    if not p.is_absolute():
        p = Path(repo_root or Path(__file__).resolve().parents[1]) / p
    if not p.exists():
        raise NotInRealWorld(f"real data folder {p} does not exist (the profile's real.data_dir)")
    return p


def load_reference(folder: Path, path: str = REFERENCE_FILE) -> list[dict]:
    """The reference model's released outputs (records with instruction, output, generator, dataset)."""
    recs = load_model_outputs(folder / path)
    for i, r in enumerate(recs):
        if not isinstance(r["output"], str):
            raise DataFormatError(f"{folder / path}: record {i}: field 'output' must be a string")
    return recs


def split_805(records: list[dict], sizes: dict[str, int], seed: int = 0, source: str = "") -> dict[str, list[dict]]:
    """The AlpacaEval instructions split into disjoint ``sizes`` (eval first, then the others), shuffled
    with ``seed``; each record keeps ``dataset`` and gets ``datasplit``. Raises ValueError naming the
    file when the sizes ask for more instructions than there are."""
    need = sum(sizes[s] for s in SPLITS)
    if need > len(records):
        raise ValueError(f"{source}: the splits need {need} instructions ({sizes}), the file has {len(records)}")
    order = list(range(len(records)))
    random.Random(f"real-splits-{seed}").shuffle(order)
    out, at = {}, 0
    for s in ("eval", "sft", "preference", "unlabeled", "val"):
        idx = sorted(order[at:at + sizes[s]])  # the released order within a split (reproducible, readable)
        at += sizes[s]
        out[s] = [{"instruction": records[i]["instruction"], "input": records[i].get("input", ""),
                   "output": records[i]["output"], "dataset": records[i].get("dataset", ""), "datasplit": s}
                  for i in idx]
    return {s: out[s] for s in SPLITS}


def load_real_splits(real, sizes: dict[str, int], seed: int = 0) -> dict[str, list[dict]]:
    """The five splits of a real profile (``real`` is its :class:`~farmlib.profiles.RealData`)."""
    if real.splits == "alpaca_eval_805":
        folder = data_dir(real.data_dir)
        return split_805(load_reference(folder, real.reference), sizes, seed, source=str(folder / real.reference))
    if real.splits == "alpaca_farm":
        from farmlib.data import load_alpaca_farm

        folder = data_dir(real.hub_folder) if real.hub_folder else None  # None: download from the hub
        return {s: load_alpaca_farm(s, folder=folder) for s in SPLITS}
    raise ValueError(f"unknown real.splits {real.splits!r}; choose from alpaca_eval_805, alpaca_farm")


def pretraining_texts(real, n: int, exclude: set[str]) -> list[str]:
    """``n`` plain texts for the base model: the released AlpacaEval outputs of models other than the
    reference, without their instructions (the base model never sees an instruction), deterministic order."""
    folder = data_dir(real.data_dir)
    ref = (folder / real.reference).parent.name
    texts: list[str] = []
    for f in sorted((folder / RESULTS_DIR).glob("*/model_outputs.json")):
        if f.parent.name == ref:
            continue
        texts += [r["output"] for r in load_records(f, required=("instruction", "output"))
                  if isinstance(r["output"], str) and r["output"].strip() and r["instruction"] not in exclude]
    random.Random("real-pretraining").shuffle(texts)
    return texts[:n]


class ReleasedPeople:
    """``human`` on real data: the released human preference annotations of a file (AlpacaEval format:
    instruction, output_1, output_2, preference), looked up by (instruction, output_1, output_2).

    A pair nobody annotated gets ``preference=None``: released labels cannot be asked for again.
    """

    def __init__(self, path: str | Path, name: str = "human"):
        self.path, self.name = Path(path), name
        recs = load_records(self.path, required=("instruction", "output_1", "output_2", "preference"))
        self.labels: dict[tuple[str, str, str], float] = {}
        for r in recs:
            self.labels[(r["instruction"], r["output_1"], r["output_2"])] = r["preference"]

    def annotate_pairs(self, records: list[dict], seed: int = 0) -> list[dict]:
        out = []
        for r in records:
            p = self.labels.get((r["instruction"], r["output_1"], r["output_2"]))
            if p is None:  # the same pair shown the other way round
                q = self.labels.get((r["instruction"], r["output_2"], r["output_1"]))
                p = None if q is None else (3 - q if q in (1, 2) else q)
            out.append(dict(r, preference=p, annotator=self.name))
        return out
