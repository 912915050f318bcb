"""The farm: get-or-build of every expensive result for one profile.

Notebooks call ``Farm(profile)`` and ask for what they need; each step is an artifact keyed by
its config (and by its inputs' keys), so a chapter runs on its own, a warm rerun is instant and
an interrupted build resumes::

    farm = Farm("tiny")
    sft = farm.sft_model()                       # trains the base model first if needed
    outs = farm.samples(sft, split="eval")       # cached responses
    farm.evaluate_true(outs)                     # win-rate vs the reference, judged by R*

A profile with a ``real`` block (:class:`farmlib.profiles.RealData`) runs the same calls on real data
(:mod:`farmlib.real`): real splits, a released reference, the real judge pool; what exists only in FarmWorld
(``world``, R*, the crowd, the writers) raises :class:`farmlib.real.NotInRealWorld` (see ``is_farmworld``).
"""

from __future__ import annotations

import dataclasses
import random
import time
from pathlib import Path

from farmlib.artifacts import ArtifactStore, read_json, runs_root, write_json
from farmlib.data import SPLITS, paired
from farmlib.evaluation.win_rate import WinRate, preference_from_scores, win_rate
from farmlib.lm.model import load_model, load_tokenizer, n_trainable, new_model, train_tokenizer, with_lora
from farmlib.lm.sampling import respond
from farmlib.lm.supervised import train_lm
from farmlib.profiles import Profile, get_profile
from farmlib.provenance import data_digest
from farmlib.seeding import deterministic_torch
from farmlib.world import REFERENCE, FarmWorld, Writer, format_prompt, make_splits


class Farm:
    """Artifacts, data and models of one profile; making one turns on torch's deterministic kernels
    (:func:`farmlib.seeding.deterministic_torch`)."""

    def __init__(self, profile: str | Profile = "tiny", root: str | Path | None = None, **overrides):
        self.profile = get_profile(profile, **overrides)
        deterministic_torch(device=self.profile.device)
        # absolute, so that artifact paths (and the keys made from them, :meth:`key`) do not depend on the
        # working directory or on how the root was written
        self.root = (Path(root) if root is not None else runs_root() / self.profile.name).resolve()
        self.store = ArtifactStore(self.root)
        self._world = FarmWorld(self.profile.world_seed) if self.profile.real is None else None
        self._cache: dict = {}

    # -- which world ------------------------------------------------------------------------
    @property
    def is_farmworld(self) -> bool:
        """True in FarmWorld (R*, people, writers exist); False on real data (:mod:`farmlib.real`)."""
        return self.profile.real is None

    @property
    def world(self) -> FarmWorld:
        """FarmWorld (raises :class:`~farmlib.real.NotInRealWorld` on real data: there is no world to ask)."""
        if self._world is None:
            self.not_in_real_world("FarmWorld itself (its generator, facts and true reward)")
        return self._world

    def not_in_real_world(self, what: str):
        """Raise :class:`~farmlib.real.NotInRealWorld` naming ``what`` does not exist on real data."""
        from farmlib.real import NotInRealWorld

        raise NotInRealWorld(f"{what} does not exist on real data (profile {self.profile.name!r})")

    def real_data_note(self, text: str) -> object:
        """One rendered line saying what a chapter cannot show on real data, and why (a Markdown object;
        on FarmWorld, None). The chapter displays it and shows what it can."""
        if self.is_farmworld:
            return None
        line = f"> **Real data ({self.profile.name}).** {text}"
        try:
            from IPython.display import Markdown
        except ImportError:  # outside a notebook, without the book extras: the line itself
            return line
        return Markdown(line)

    def evaluation_annotators(self, wanted: tuple[str, ...] = ("p_sim_eval", "human")) -> tuple[str, ...]:
        """The annotators of ``wanted`` that exist in this world: all in FarmWorld; on real data ``human``
        only where the profile names released human annotations (``real.people``)."""
        if self.is_farmworld:
            return tuple(wanted)
        return tuple(a for a in wanted if a != "human" or self.profile.real.people)

    def judges_key(self) -> dict:
        """What makes the simulated judges what they are: the learned FarmWorld families
        (:func:`farmlib.annotators.learned.judges_key`) or the real pool (:func:`farmlib.real_judges.pool_key`)."""
        if self.is_farmworld:
            from farmlib.annotators.learned import judges_key

            return judges_key()
        from farmlib.real_judges import pool_key

        return pool_key(self.profile.real)

    def _people_key(self) -> dict | None:
        """What FarmWorld's simulated people are (None on real data, whose people are released labels)."""
        if not self.is_farmworld:
            return None
        from farmlib.annotators.people import crowd_key

        return crowd_key()

    # -- data -----------------------------------------------------------------------------
    def _splits_config(self) -> dict:
        p = self.profile
        cfg = {"data": p.data, "sizes": p.split_sizes(), "world_seed": p.world_seed}
        if self.is_farmworld:
            cfg["mix"] = "eval"  # every split draws eval's family mix (farmlib.world.splits)
        if p.real is not None:
            cfg["real"] = {"splits": p.real.splits, "reference": p.real.reference, "hub_folder": p.real.hub_folder}
        return cfg

    def splits(self) -> dict[str, list[dict]]:
        """All five splits (records in the Alpaca schema)."""
        if "splits" not in self._cache:
            def build(work: Path) -> None:
                if self.is_farmworld:
                    data = make_splits(self.world, self.profile.split_sizes(), seed=self.profile.world_seed)
                else:  # real instructions (farmlib.real): the hub's AlpacaFarm splits, or the 805 split
                    from farmlib.real import load_real_splits

                    data = load_real_splits(self.profile.real, self.profile.split_sizes(), self.profile.world_seed)
                for s, recs in data.items():
                    write_json(work / f"{s}.json", recs)

            path = self.store.get_or_build("splits", self._splits_config(), build)
            self._cache["splits"] = {s: read_json(path / f"{s}.json") for s in SPLITS}
        return self._cache["splits"]

    def key(self, path: str) -> str:
        """How an artifact path enters another artifact's config: relative to the farm's root (so
        keys do not depend on the working directory); a hub name or outside path stays as it is."""
        try:
            return str(Path(path).resolve().relative_to(self.root.resolve()))
        except ValueError:
            return str(path)

    def artifact(self, kind: str, inputs: dict, build) -> str:
        """Get-or-build the artifact made by ``build(workdir)`` from ``inputs``: its key is the hash of
        ``inputs``, where config dataclasses count by their fields, artifact paths by ``key``, the name
        of a simulated annotator (``p_sim_*`` under ``annotator`` or ``labels``) by what its judges are
        (:func:`farmlib.annotators.learned.judges_key`), and FarmWorld's ``human`` by what its people are
        (:func:`farmlib.annotators.people.crowd_key`)."""
        judges = self.judges_key()
        people = self._people_key()

        def annotator_key(x: str):
            if x.startswith("p_sim"):
                return {"name": x, "judges": judges}
            return {"name": x, "people": people} if x == "human" and people else x

        def keyed(v):
            if dataclasses.is_dataclass(v):
                return keyed(dataclasses.asdict(v))
            if isinstance(v, dict):
                return {k: (annotator_key(x) if k in ("annotator", "labels") and isinstance(x, str) else keyed(x))
                        for k, x in v.items()}
            if isinstance(v, (list, tuple)):
                return [keyed(x) for x in v]
            if isinstance(v, str) and Path(v).is_absolute():
                return self.key(v)
            return v

        return str(self.store.get_or_build(kind, keyed(inputs), build))

    # -- method configuration ---------------------------------------------------------------
    def method_config(self, name: str, overrides: dict | None = None):
        """A method's effective config: the dataclass defaults, then the profile's ``methods[name]``,
        then ``overrides`` (a chapter's parameter). Unknown fields are an error naming the valid ones."""
        from farmlib.methods import CONFIGS

        if name not in CONFIGS:
            raise ValueError(f"unknown method {name!r}; choose from {', '.join(sorted(CONFIGS))}")
        cls = CONFIGS[name]
        merged = {**self.profile.methods.get(name, {}), **(overrides or {})}
        valid = [f.name for f in dataclasses.fields(cls)]
        bad = sorted(set(merged) - set(valid))
        if bad:
            raise ValueError(f"{cls.__name__} has no field {', '.join(bad)}; its fields are: {', '.join(valid)}")
        return cls(**merged)

    def run_name(self, name: str, cfg) -> str:
        """``name`` for the profile's config of a method, else ``name[field=value,...]`` naming what differs."""
        default = dataclasses.asdict(self.method_config(name))
        diff = [f"{k}={v}" for k, v in dataclasses.asdict(cfg).items() if default.get(k) != v]
        return f"{name}[{','.join(diff)}]" if diff else name

    # -- tokenizer and models -------------------------------------------------------------
    def tokenizer_path(self) -> str:
        p = self.profile
        if p.model.pretrained:
            return p.model.pretrained
        cfg = {"splits": self._splits_config(), "vocab": p.model.vocab_size, "docs": p.pretrain_docs}

        def build(work: Path) -> None:
            sp = self.splits()
            texts = self.pretraining_docs(seed=0) + [
                format_prompt(r["instruction"], r["input"]) + r["output"]
                for s in ("sft", "preference", "unlabeled", "val") for r in sp[s]]
            train_tokenizer(texts, p.model.vocab_size).save_pretrained(work)

        return str(self.store.get_or_build("tokenizer", cfg, build))

    def pretraining_docs(self, seed: int = 1) -> list[str]:
        """The base model's corpus: FarmWorld's world text, or on real data the released AlpacaEval outputs
        of other models than the reference, without instructions (:func:`farmlib.real.pretraining_texts`)."""
        if self.is_farmworld:
            return self.world.corpus(self.profile.pretrain_docs, seed=seed)
        from farmlib.real import pretraining_texts

        return pretraining_texts(self.profile.real, self.profile.pretrain_docs,
                                 exclude={r["instruction"] for s in ("eval", "val") for r in self.splits()[s]})

    def tokenizer(self):
        if "tok" not in self._cache:
            self._cache["tok"] = load_tokenizer(self.tokenizer_path())
        return self._cache["tok"]

    def base_model(self) -> str:
        """The base LM (LLaMA-base analog): pretrained on world text, never on instructions."""
        p = self.profile
        if p.model.pretrained:
            return p.model.pretrained
        cfg = {"tokenizer": self.key(self.tokenizer_path()), "model": dataclasses.asdict(p.model),
               "train": dataclasses.asdict(p.pretrain), "docs": p.pretrain_docs, "seed": p.world_seed}

        if p.real is not None:
            cfg["arch"] = p.real.arch

        def build(work: Path) -> None:
            arch = "llama" if p.real is None else p.real.arch
            model = new_model(p.model, self.tokenizer(), seed=p.pretrain.seed, arch=arch)
            docs = self.pretraining_docs()
            self._train_and_save(model, [("", d) for d in docs], p.pretrain, work, "pretrain base", lora=False,
                                 docs=len(docs))

        return str(self.store.get_or_build("base", cfg, build))

    def sft_model(self, splits: tuple[str, ...] = ("sft",), start: str | None = None, train=None) -> str:
        """SFT on the demonstrations of ``splits`` (``("sft",)`` is SFT 10k; all four is SFT 52k);
        ``train`` (a TrainConfig) replaces the profile's SFT settings."""
        p = self.profile
        start = start or self.base_model()
        train = train or p.sft
        cfg = {"start": self.key(start), "splits": list(splits), "data": self._splits_config(),
               "train": dataclasses.asdict(train), "max_length": p.model.max_length}
        if p.model.lora_r:
            cfg["lora_r"] = p.model.lora_r

        def build(work: Path) -> None:
            model = load_model(start, p.device).train()
            sp = self.splits()
            pairs = [(format_prompt(r["instruction"], r["input"]), r["output"]) for s in splits for r in sp[s]]
            self._train_and_save(model, pairs, train, work, "SFT on " + "+".join(splits), examples=len(pairs))

        return str(self.store.get_or_build("sft", cfg, build))

    def _train_and_save(self, model, pairs, cfg, work: Path, desc: str, lora: bool = True, **info) -> None:
        """Train with ``train_lm`` in ``work`` (resumable), then save model, tokenizer and history."""
        t0 = time.time()
        lora = self.profile.model.lora_r if lora else 0
        if lora:  # train adapters only, then merge them so the artifact is a plain model
            model = with_lora(model, lora, seed=cfg.seed)
            info["trainable_params"] = n_trainable(model)
        hist = train_lm(model, self.tokenizer(), pairs, cfg, work, self.profile.model.max_length,
                        self.profile.device, desc=desc)
        if lora:
            model = model.merge_and_unload()
        model.save_pretrained(work)
        self.tokenizer().save_pretrained(work)
        write_json(work / "history.json", hist)
        write_json(work / "train_info.json", {"seconds": time.time() - t0, **info})

    def load(self, path: str):
        """A model from an artifact path (or hub name), on the profile's device; a hub base model is
        loaded in 4-bit where the profile says so (trained artifacts are saved merged, full precision)."""
        four_bit = self.profile.model.load_in_4bit and path == self.profile.model.pretrained
        return load_model(path, self.profile.device, load_in_4bit=four_bit)

    # -- outputs --------------------------------------------------------------------------
    def samples(self, model_path: str, split: str = "eval", temperature: float | None = None,
                generator: str | None = None, seed: int = 0, prefix: str = "", n: int | None = None,
                top_p: float = 1.0) -> list[dict]:
        """The model's responses to the first ``n`` records of a split (records with ``output`` and
        ``generator``); ``prefix`` goes before the prompt (a control tag such as ``[good]``); ``top_p < 1``:
        nucleus sampling."""
        p = self.profile
        temperature = p.temperature if temperature is None else temperature
        generator = generator or Path(model_path).parent.name + "-" + Path(model_path).name[:6]
        cfg = {"model": self.key(model_path), "split": split, "data": self._splits_config(), "temperature": temperature,
               "max_new_tokens": p.max_new_tokens, "seed": seed, "prefix": prefix, "n": n, "top_p": top_p}

        def build(work: Path) -> None:
            recs = self.splits()[split][:n]
            t0 = time.time()
            outs = respond(self.load(model_path), self.tokenizer(), recs, temperature=temperature,
                           max_new_tokens=p.max_new_tokens, batch_size=p.gen_batch_size, seed=seed,
                           desc=f"sample {generator}", prefix=prefix, top_p=top_p)
            write_json(work / "outputs.json", [
                {"instruction": r["instruction"], "input": r["input"], "output": o, "dataset": r.get("dataset", "")}
                for r, o in zip(recs, outs)])
            write_json(work / "info.json", {"seconds": time.time() - t0})

        path = self.store.get_or_build("samples", cfg, build)
        return [dict(r, generator=generator) for r in read_json(path / "outputs.json")]

    def writer_outputs(self, writer: Writer = REFERENCE, split: str = "eval", seed: int = 0) -> list[dict]:
        """Responses of a procedural FarmWorld writer (the reference model is one)."""
        if not self.is_farmworld:
            self.not_in_real_world(f"the FarmWorld writer {writer.name!r}")
        rng = random.Random(f"writer-{writer.name}-{split}-{seed}")
        return [{"instruction": r["instruction"], "input": r["input"], "dataset": r.get("dataset", ""),
                 "output": self.world.write(r, writer, rng), "generator": writer.name}
                for r in self.splits()[split]]

    def reference_outputs(self) -> list[dict]:
        """The fixed reference outputs of the evaluation: the Davinci003 analog in FarmWorld; on real data
        text-davinci-003's released AlpacaEval outputs on the eval split's instructions."""
        if self.is_farmworld:
            return self.writer_outputs(REFERENCE, "eval")
        if "reference" not in self._cache:
            from farmlib.real import data_dir, load_reference

            folder = data_dir(self.profile.real.data_dir)
            by = {r["instruction"]: r for r in load_reference(folder, self.profile.real.reference)}
            out = []
            for r in self.splits()["eval"]:
                if r["instruction"] not in by:
                    raise ValueError(f"{folder / self.profile.real.reference}: no reference output for the eval "
                                     f"instruction {r['instruction'][:60]!r} (field 'instruction')")
                ref = by[r["instruction"]]
                out.append({"instruction": r["instruction"], "input": r["input"], "dataset": r.get("dataset", ""),
                            "output": ref["output"], "generator": ref["generator"]})
            self._cache["reference"] = out
        return self._cache["reference"]

    # -- evaluation -----------------------------------------------------------------------
    def true_rewards(self, outputs: list[dict]) -> list[float]:
        """R* of each output (FarmWorld only)."""
        if not self.is_farmworld:
            self.not_in_real_world("the true reward R*")
        return [self.world.true_reward(r["instruction"], r["input"], r["output"]) for r in outputs]

    def annotate_true(self, outputs: list[dict], reference: list[dict] | None = None) -> list[dict]:
        """AlpacaEval-format annotations, judged by the true reward R* (what a person feels)."""
        if not self.is_farmworld:
            self.not_in_real_world("the true reward R*")
        ann = []
        for pair in self.pairs_with_reference(outputs, reference):
            r1 = self.world.true_reward(pair["instruction"], pair["input"], pair["output_1"])
            r2 = self.world.true_reward(pair["instruction"], pair["input"], pair["output_2"])
            ann.append(dict(pair, preference=preference_from_scores(r1, r2), annotator="true_reward"))
        return ann

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

    def evaluate_true(self, outputs: list[dict], reference: list[dict] | None = None) -> WinRate:
        return win_rate(a["preference"] for a in self.annotate_true(outputs, reference))

    # -- simulated feedback -----------------------------------------------------------------
    def annotator(self, name: str = "p_sim_eval", seed: int = 0):
        """``p_sim_eval``, ``p_sim_ann``, ``p_sim_single`` (the learned judges, :meth:`judge_lms`) or ``human``
        (the crowd).

        One instance per (name, seed) is made and reused: an annotator draws its randomness from the
        ``seed`` of each ``annotate_pairs`` call, so reuse changes no label, and its judges' cached reads
        are shared by every later ``evaluate``."""
        from farmlib import annotators as A

        makers = {"p_sim_eval": A.pool_eval, "p_sim_ann": A.pool_ann, "p_sim_single": A.single_judge}
        if not self.is_farmworld:
            return self._real_annotator(name, seed)
        if name == "human":
            return A.Crowd(self.world, seed=seed)
        if name not in makers:
            raise ValueError(f"unknown annotator {name!r}; choose from {sorted([*makers, 'human'])}")
        key = ("annotator", name, seed)
        if key not in self._cache:
            self._cache[key] = makers[name](self.judge_lms(), seed=seed)
        return self._cache[key]

    def _real_annotator(self, name: str, seed: int = 0):
        """The real pool (:class:`farmlib.real_judges.RealJudges`), or released people for ``human``."""
        key = ("annotator", name, seed)
        if key in self._cache:
            return self._cache[key]
        real = self.profile.real
        if name == "human":
            if not real.people:
                self.not_in_real_world("fresh human labels (no released human annotations are configured: "
                                       "real.people)")
            from farmlib.real import ReleasedPeople, data_dir

            annotator = ReleasedPeople(data_dir(real.data_dir) / real.people)
        else:
            if "real_judges" not in self._cache:
                from farmlib.real_judges import RealJudges

                self._cache["real_judges"] = RealJudges(real, self.root / "judge_cache.sqlite", self.profile.device)
            annotator = self._cache["real_judges"].pool(name, seed)
        self._cache[key] = annotator
        return annotator

    def judge_reader(self):
        """The LM every judge reads text with: the base LM (pretrained on world text, never on
        instructions or preferences), loaded once per farm (:class:`farmlib.annotators.judges.TextReader`)."""
        if "judge_reader" not in self._cache:
            from farmlib.annotators.judges import TextReader

            self._cache["judge_reader"] = TextReader.load(self.base_model(), self.tokenizer(), self.profile.device,
                                                          self.profile.model.max_length)
        return self._cache["judge_reader"]

    def judge_lms(self) -> dict:
        """The three judge families (``gpt4``, ``chatgpt``, ``davinci``) at the calibrated logit scale
        (:func:`farmlib.annotators.learned.calibrate`): heads trained once (artifacts ``judge_head``) on the
        shared reader, loaded once per farm, so every pool shares their cached scores."""
        if "judge_lms" not in self._cache:
            from farmlib.annotators.judges import JudgeLM
            from farmlib.annotators.learned import JUDGE_FAMILIES, calibrate, train_judge

            k = calibrate(self)["logit_scale"]
            tuned = self._cache.setdefault("tuned_readers", {})  # shared with the calibration, if it ran here
            heads = {f: train_judge(self, cfg) for f, cfg in JUDGE_FAMILIES.items()}
            self._cache["judge_lms"] = {f: JudgeLM.load(h, self.judge_reader(), name=f, logit_scale=k,
                                                        tuned_readers=tuned, store=self.judge_scores(h))
                                        for f, h in heads.items()}
        return self._cache["judge_lms"]

    def judge_scores(self, head: str):
        """The on-disk store of a judge head's scores (``<runs>/<profile>/judge_scores/<head>.sqlite``), one
        per farm: what a family read in one chapter, the next chapter does not read again."""
        from farmlib.annotators.judges import ScoreStore

        stores = self._cache.setdefault("judge_scores", {})
        if head not in stores:
            stores[head] = ScoreStore(Path(head).parent.parent / "judge_scores" / f"{Path(head).name}.sqlite")
        return stores[head]

    def judge_train_info(self) -> dict[str, dict]:
        """Each judge family's ``train_info.json`` (seconds, pairs, final loss)."""
        from farmlib.annotators.learned import JUDGE_FAMILIES, train_judge

        return {f: read_json(Path(train_judge(self, cfg)) / "train_info.json") for f, cfg in JUDGE_FAMILIES.items()}

    def preference_data(self, annotator: str = "p_sim_ann", n: int | None = None, seed: int = 0) -> list[dict]:
        """Pairwise feedback: two SFT samples (temperature 1) per instruction of the preference split,
        labelled by ``annotator`` (records with output_1, output_2, preference; unlabelled pairs dropped)."""
        n = n if n is not None else self.profile.n_preference
        sft = self.sft_model()
        a = self.samples(sft, "preference", temperature=1.0, seed=11, generator="sft_a", n=n)
        b = self.samples(sft, "preference", temperature=1.0, seed=12, generator="sft_b", n=n)
        cfg = {"a": len(a), "sft": self.key(sft), "annotator": annotator, "seed": seed, "n": n,
               "pairs": data_digest([a, b])}

        def build(work: Path) -> None:
            pairs = paired(a, b, same=str)
            write_json(work / "preferences.json", self.annotator(annotator, seed).annotate_pairs(pairs, seed=seed))

        path = Path(self.artifact("preferences", cfg, build))
        return [r for r in read_json(path / "preferences.json") if r["preference"] in (1, 2)]

    def evaluate(self, outputs: list[dict], annotator: str = "p_sim_eval", seed: int = 0,
                 reference: list[dict] | None = None) -> tuple[WinRate, list[dict]]:
        """Win-rate of ``outputs`` against the reference on the eval set, and the annotations;
        ``reference``: the reference's outputs on the same instructions (default: the whole eval set)."""
        pairs = self.pairs_with_reference(outputs, reference)  # aligned AlpacaEval-format pairs (output_1 = reference)
        ann = self.annotator(annotator, seed).annotate_pairs(pairs, seed=seed)
        return win_rate(a["preference"] for a in ann), ann

    def finetune(self, kind: str, config: dict, pairs: list[tuple[str, str]], train, start: str | None = None,
                 **info) -> str:
        """A model fine-tuned from ``start`` (default: SFT) on (prompt, completion) pairs; an artifact keyed by
        the pairs themselves (their digest), so whatever made them, a change in it makes another model."""
        start = start or self.sft_model()
        cfg = {"start": start, "train": train, **config, "pairs": data_digest(pairs)}
        if self.profile.model.lora_r:
            cfg["lora_r"] = self.profile.model.lora_r

        def build(work: Path) -> None:
            model = load_model(start, self.profile.device).train()
            self._train_and_save(model, pairs, train, work, kind, examples=len(pairs), **info)

        return self.artifact(kind, cfg, build)

    # -- metrics --------------------------------------------------------------------------
    def write_metrics(self, chapter: str, metrics: dict) -> None:
        """Save a chapter's headline numbers to ``runs/<profile>/metrics/<chapter>.json`` (on real data marked
        ``"real": true``), with the resolved profile they were measured with (``resolved_profile``: every field, as a
        profile file resolved). Returns nothing, so a chapter's last line writing them shows nothing on the page."""
        from farmlib.book import note_metrics_written

        path = self.root / "metrics" / f"{chapter}.json"
        write_json(path, {"profile": self.profile.name, **({} if self.is_farmworld else {"real": True}), **metrics,
                          "resolved_profile": self.profile.to_dict()})
        note_metrics_written(path)
