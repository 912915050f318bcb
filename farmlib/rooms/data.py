"""The farm's data room: the five splits, the tokenizer and its corpus, the writers' and the reference's outputs.

Change how splits are drawn or read, what the base model reads, or what the reference answers: here. Every
artifact built from the splits keys on :meth:`DataRoom.key` (the splits artifact itself), so a change here
rebuilds everything downstream.
"""

from __future__ import annotations

import random
from pathlib import Path

from farmlib.artifacts import read_json, write_json
from farmlib.data import SPLITS
from farmlib.lm.model import is_gguf, load_tokenizer, train_tokenizer
from farmlib.world import REFERENCE, Writer, format_prompt, make_splits


class DataRoom:
    """Splits, tokenizer and reference outputs of one :class:`~farmlib.pipeline.Farm`."""

    def __init__(self, farm):
        self.farm = farm
        self._splits: dict | None = None
        self._tok = None
        self._reference: list[dict] | None = None

    def config(self) -> dict:
        """What the splits are made from (their artifact's config)."""
        p, farm = self.farm.profile, self.farm
        cfg = {"data": p.data, "sizes": p.split_sizes(), "world_seed": p.world_seed}
        if farm.is_farmworld:
            cfg["mix"] = "eval"  # every split draws eval's family mix (farmlib.world.splits)
        if p.real is not None:
            cfg["real"] = {"splits": p.real.splits, "reference": p.real.reference, "hub_folder": p.real.hub_folder}
        return cfg

    def path(self) -> str:
        """The splits artifact (built if missing)."""
        farm = self.farm

        def build(work: Path) -> None:
            if farm.is_farmworld:
                data = make_splits(farm.world, farm.profile.split_sizes(), seed=farm.profile.world_seed)
            else:  # real instructions (farmlib.real): the hub's AlpacaFarm splits, or the 805 split
                from farmlib.real import load_real_splits

                data = load_real_splits(farm.profile.real, farm.profile.split_sizes(), farm.profile.world_seed)
            for s, recs in data.items():
                write_json(work / f"{s}.json", recs)

        return str(farm.store.get_or_build("splits", self.config(), build))

    def key(self) -> dict:
        """How the splits enter another artifact's key: their artifact (its config and the code that made it)."""
        return {"splits": self.farm.key(self.path())}

    def splits(self) -> dict[str, list[dict]]:
        """All five splits (records in the Alpaca schema)."""
        if self._splits is None:
            path = Path(self.path())
            self._splits = {s: read_json(path / f"{s}.json") for s in SPLITS}
        return self._splits

    def pretraining_docs(self, seed: int = 1) -> list[str]:
        """The base model's corpus: FarmWorld's world text, or on real data the released AlpacaEval outputs
        of other models than the reference, without instructions (:func:`farmlib.real.pretraining_texts`)."""
        farm = self.farm
        if farm.is_farmworld:
            return farm.world.corpus(farm.profile.pretrain_docs, seed=seed)
        from farmlib.real import pretraining_texts

        return pretraining_texts(farm.profile.real, farm.profile.pretrain_docs,
                                 exclude={r["instruction"] for s in ("eval", "val") for r in self.splits()[s]})

    def tokenizer_path(self) -> str:
        p = self.farm.profile
        if is_gguf(p.model.pretrained):
            return self.farm.models.converted_base()  # saved with the converted model (loading it is slow)
        if p.model.pretrained:
            return p.model.pretrained
        cfg = {**self.key(), "vocab": p.model.vocab_size, "docs": p.pretrain_docs}

        def build(work: Path) -> None:
            sp = self.splits()
            texts = self.pretraining_docs(seed=0) + [
                format_prompt(r["instruction"], r["input"]) + r["output"]
                for s in ("sft", "preference", "unlabeled", "val") for r in sp[s]]
            train_tokenizer(texts, p.model.vocab_size).save_pretrained(work)

        return str(self.farm.store.get_or_build("tokenizer", cfg, build))

    def tokenizer(self):
        if self._tok is None:
            self._tok = load_tokenizer(self.tokenizer_path())
        return self._tok

    def writer_outputs(self, writer: Writer = REFERENCE, split: str = "eval", seed: int = 0) -> list[dict]:
        """Responses of a procedural FarmWorld writer (the reference model is one)."""
        farm = self.farm
        if not farm.is_farmworld:
            farm.not_in_real_world(f"the FarmWorld writer {writer.name!r}")
        rng = random.Random(f"writer-{writer.name}-{split}-{seed}")
        return [{"instruction": r["instruction"], "input": r["input"], "dataset": r.get("dataset", ""),
                 "output": farm.world.write(r, writer, rng), "generator": writer.name}
                for r in self.splits()[split]]

    def reference_outputs(self) -> list[dict]:
        """The fixed reference outputs of the evaluation: the Davinci003 analog in FarmWorld; on real data
        text-davinci-003's released AlpacaEval outputs on the eval split's instructions."""
        farm = self.farm
        if farm.is_farmworld:
            return self.writer_outputs(REFERENCE, "eval")
        if self._reference is None:
            from farmlib.real import data_dir, load_reference

            folder = data_dir(farm.profile.real.data_dir)
            by = {r["instruction"]: r for r in load_reference(folder, farm.profile.real.reference)}
            out = []
            for r in self.splits()["eval"]:
                if r["instruction"] not in by:
                    raise ValueError(f"{folder / farm.profile.real.reference}: no reference output for the eval "
                                     f"instruction {r['instruction'][:60]!r} (field 'instruction')")
                ref = by[r["instruction"]]
                out.append({"instruction": r["instruction"], "input": r["input"], "dataset": r.get("dataset", ""),
                            "output": ref["output"], "generator": ref["generator"]})
            self._reference = out
        return self._reference

    def pairs_with_reference(self, outputs: list[dict], reference: list[dict] | None = None) -> list[dict]:
        """AlpacaEval-format pairs (``output_1`` = the reference's, ``output_2`` = ``outputs``'), aligned on
        the same instructions (a ValueError otherwise)."""
        reference = reference or self.reference_outputs()
        pairs = []
        for ref, out in zip(reference, outputs, strict=True):
            if ref["instruction"] != out["instruction"] or ref["input"] != out["input"]:
                raise ValueError("outputs and reference are not aligned on the same instructions")
            pairs.append({"instruction": out["instruction"], "input": out["input"], "dataset": out.get("dataset", ""),
                          "output_1": ref["output"], "generator_1": ref["generator"],
                          "output_2": out["output"], "generator_2": out["generator"]})
        return pairs
