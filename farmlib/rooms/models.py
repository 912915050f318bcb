"""The farm's models room: the base model, SFT, sampling, fine-tuning, and the methods' configs.

Change how the base model is pretrained, how SFT or a fine-tune trains, or how outputs are sampled: here.
Each model is an artifact keyed by its config, the splits it read (:meth:`DataRoom.key`) and its training data.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from farmlib.artifacts import read_json, write_json
from farmlib.lm.model import is_gguf, load_model, n_trainable, new_model, with_lora
from farmlib.lm.sampling import respond
from farmlib.lm.supervised import train_lm
from farmlib.provenance import data_digest
from farmlib.world import format_prompt


class ModelRoom:
    """Base, SFT and fine-tuned models and their samples, for one :class:`~farmlib.pipeline.Farm`."""

    def __init__(self, farm):
        self.farm = farm

    def base_model(self) -> str:
        """The base LM (LLaMA-base analog): pretrained on world text, never on instructions."""
        farm, p = self.farm, self.farm.profile
        if is_gguf(p.model.pretrained):
            return self.converted_base()
        if p.model.pretrained:
            return p.model.pretrained
        cfg = {"tokenizer": farm.key(farm.tokenizer_path()), "model": dataclasses.asdict(p.model),
               "train": dataclasses.asdict(p.pretrain), "docs": p.pretrain_docs, "seed": p.world_seed}
        if p.real is not None:
            cfg["arch"] = p.real.arch

        def build(work: Path) -> None:
            arch = "llama" if p.real is None else p.real.arch
            model = new_model(p.model, farm.tokenizer(), seed=p.pretrain.seed, arch=arch)
            docs = farm.pretraining_docs()
            self.train_and_save(model, [("", d) for d in docs], p.pretrain, work, "pretrain base", lora=False,
                                docs=len(docs))

        return str(farm.store.get_or_build("base", cfg, build))

    def with_base_seed(self, seed: int):
        """The farm with its base model pretrained from ``seed``: the same world, splits and runs folder, so only
        the base model and what is built from it differ (the farm itself for the profile's own seed)."""
        farm = self.farm
        if seed == farm.profile.pretrain.seed:
            return farm
        return type(farm)(farm.profile, root=farm.root, pretrain=dataclasses.replace(farm.profile.pretrain, seed=seed))

    def converted_base(self) -> str:
        """A ``gguf:`` base model (:data:`farmlib.lm.model.GGUF`) saved once as an ordinary float32 model folder with
        its tokenizer: dequantising the file takes about a minute on 2 cores (its tokenizer half a minute more), and
        every SFT, reward model, judge and sampler starts from the base. Keyed by the name and the file's digest."""
        from farmlib.lm.model import gguf_digest, load_tokenizer

        name = self.farm.profile.model.pretrained

        def build(work: Path) -> None:
            t0 = time.time()
            load_model(name, "cpu").save_pretrained(work)
            load_tokenizer(name).save_pretrained(work)
            write_json(work / "train_info.json", {"seconds": time.time() - t0, "converted_from": name})

        return str(self.farm.store.get_or_build("base", {"gguf": name, "file": gguf_digest(name)}, build))

    def sft_model(self, splits: tuple[str, ...] = ("sft",), start: str | None = None, train=None) -> str:
        """SFT on the demonstrations of ``splits`` (``("sft",)`` is SFT 10k; all four is SFT 52k);
        ``train`` (a TrainConfig) replaces the profile's SFT settings."""
        farm, p = self.farm, self.farm.profile
        start = start or self.base_model()
        train = train or p.sft
        cfg = {"start": farm.key(start), "splits": list(splits), "data": farm.data_key(),
               "train": dataclasses.asdict(train), "max_length": p.model.max_length}
        if p.model.lora_r:
            cfg["lora_r"] = p.model.lora_r

        def build(work: Path) -> None:
            model = load_model(start, p.device).train()
            sp = farm.splits()
            pairs = [(format_prompt(r["instruction"], r["input"]), r["output"]) for s in splits for r in sp[s]]
            self.train_and_save(model, pairs, train, work, "SFT on " + "+".join(splits), examples=len(pairs))

        return str(farm.store.get_or_build("sft", cfg, build))

    def train_and_save(self, model, pairs, cfg, work: Path, desc: str, lora: bool = True, **info) -> None:
        """Train with ``train_lm`` in ``work`` (resumable), then save model, tokenizer and history."""
        farm = self.farm
        t0 = time.time()
        lora = farm.profile.model.lora_r if lora else 0
        if lora:  # train adapters only, then merge them so the artifact is a plain model
            model = with_lora(model, lora, seed=cfg.seed)
            info["trainable_params"] = n_trainable(model)
        hist = train_lm(model, farm.tokenizer(), pairs, cfg, work, farm.profile.model.max_length,
                        farm.profile.device, desc=desc)
        if lora:
            model = model.merge_and_unload()
        model.save_pretrained(work)
        farm.tokenizer().save_pretrained(work)
        write_json(work / "history.json", hist)
        write_json(work / "train_info.json", {"seconds": time.time() - t0, **info})

    def finetune(self, kind: str, config: dict, pairs: list[tuple[str, str]], train, start: str | None = None,
                 **info) -> str:
        """A model fine-tuned from ``start`` (default: SFT) on (prompt, completion) pairs; an artifact keyed by
        the pairs themselves (their digest), so whatever made them, a change in it makes another model."""
        farm = self.farm
        start = start or self.sft_model()
        cfg = {"start": start, "train": train, **config, "pairs": data_digest(pairs)}
        if farm.profile.model.lora_r:
            cfg["lora_r"] = farm.profile.model.lora_r

        def build(work: Path) -> None:
            model = load_model(start, farm.profile.device).train()
            self.train_and_save(model, pairs, train, work, kind, examples=len(pairs), **info)

        return farm.artifact(kind, cfg, build)

    def load(self, path: str):
        """A model from an artifact path (or hub name), on the profile's device; a hub base model is
        loaded in 4-bit where the profile says so (trained artifacts are saved merged, full precision)."""
        p = self.farm.profile
        return load_model(path, p.device, load_in_4bit=p.model.load_in_4bit and path == p.model.pretrained)

    def samples(self, model_path: str, split: str = "eval", temperature: float | None = None,
                generator: str | None = None, seed: int = 0, prefix: str = "", n: int | None = None,
                top_p: float = 1.0) -> list[dict]:
        """The model's responses to the first ``n`` records of a split (records with ``output`` and
        ``generator``); ``prefix`` goes before the prompt (a control tag such as ``[good]``); ``top_p < 1``:
        nucleus sampling."""
        farm, p = self.farm, self.farm.profile
        temperature = p.temperature if temperature is None else temperature
        generator = generator or Path(model_path).parent.name + "-" + Path(model_path).name[:6]
        cfg = {"model": farm.key(model_path), "split": split, "data": farm.data_key(), "temperature": temperature,
               "max_new_tokens": p.max_new_tokens, "seed": seed, "prefix": prefix, "n": n, "top_p": top_p}

        def build(work: Path) -> None:
            recs = farm.splits()[split][:n]
            t0 = time.time()
            outs = respond(self.load(model_path), farm.tokenizer(), recs, temperature=temperature,
                           max_new_tokens=p.max_new_tokens, batch_size=p.gen_batch_size, seed=seed,
                           desc=f"sample {generator}", prefix=prefix, top_p=top_p)
            write_json(work / "outputs.json", [
                {"instruction": r["instruction"], "input": r["input"], "output": o, "dataset": r.get("dataset", "")}
                for r, o in zip(recs, outs)])
            write_json(work / "info.json", {"seconds": time.time() - t0})

        path = farm.store.get_or_build("samples", cfg, build)
        return [dict(r, generator=generator) for r in read_json(path / "outputs.json")]

    def method_config(self, name: str, overrides: dict | None = None):
        """A method's effective config: the dataclass defaults, then the profile's ``methods[name]``,
        then ``overrides`` (a chapter's parameter). Unknown fields are an error naming the valid ones."""
        from farmlib.methods import CONFIGS

        if name not in CONFIGS:
            raise ValueError(f"unknown method {name!r}; choose from {', '.join(sorted(CONFIGS))}")
        cls = CONFIGS[name]
        merged = {**self.farm.profile.methods.get(name, {}), **(overrides or {})}
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
