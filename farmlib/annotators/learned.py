"""How FarmWorld's judges are made: what each judge family learned from (training time only).

A judge (``p_sim``) is a *learned model that only sees text*. Each family has two readers and a head:

* **its own instruction-tuned LM** (:func:`judge_lm`): the world's pretrained base LM fine-tuned on an
  expert writer's answers to instructions of the ``unlabeled`` split, as an LLM judge learned to answer
  before it was asked to judge. How likely it finds a response (the statistics of its tokens'
  log-probabilities) is what the judge knows of the task: an LM that learned the world's facts and tasks
  from good answers finds a correct, on-topic answer likelier than a wrong one;
* **the world's base LM** (:meth:`farmlib.pipeline.Farm.base_model`, trained on world text, never on
  instructions or preferences; :class:`~farmlib.annotators.judges.TextReader`), shared by the families:
  how fluent the response is, and surface features (length, lines, list, word variety, what it says again);
* **what it knows of the world** (``knows``; :mod:`farmlib.annotators.knowledge`): every family knows the
  world's facts and its tasks' answers, as an LLM judge knows that 6 − 5 = 1, and reads a reply beside the answer
  (how much of it the reply says, how much it gets wrong, whether it is in order, what it says off the task).
  Davinci knows them too: the paper's Davinci members are text-davinci-003, the model whose answers are the
  reference, and FarmWorld's reference writer knows the answers. Knowing the answer is not knowing what people
  value: how much a right answer is worth against a fluent or a longer one is the head's to learn;
* **a linear head**, fitted Bradley–Terry (:func:`farmlib.methods.reward_model.bt_loss`) on comparisons
  its *makers* collected — not the crowd's labels:

  - **other people**: each family's makers hired a small panel of labellers (a
    :class:`~farmlib.annotators.people.Crowd` with its own seed and 3–8 people); a small panel's mean
    taste is not the crowd's, and each pair gets one noisy label;
  - **other pairs**: answers of the world's writers (the makers' mix of careful, hurried, rambling and
    list-loving writers) to instructions of the ``unlabeled`` split — never an evaluation instruction
    (the validation and preference splits share only the small families' instructions with it,
    :mod:`farmlib.world.splits`); a share of each family's pairs sets a correct answer against a
    corruption of it (:mod:`farmlib.world.degenerate`): the "web text" a judge has seen fail; a smaller share
    sets two failures against each other (a wrong answer against one about something else), as makers rank
    their model's bad samples too: which failure is worse is taste, and only such pairs teach it;
  - **its own model's samples** (:func:`own_pairs`): two samples of the family's tuned LM per instruction,
    labelled by the same panel, as an LLM's makers labelled their own model's samples. Writers make a writer's
    mistakes (a wrong fact, a missing item); a model makes a model's (a fluent wrong answer, a ramble off
    the topic).

The families (:data:`JUDGE_FAMILIES`) differ in knowledge, amounts and capacity: ``gpt4``'s LM was tuned on the most
demonstrations and its head saw the most pairs, from the largest panel, with the most degenerate examples,
and reads its own LM's states as well as its likelihoods (``tuned_reads="all"``);
``chatgpt`` had half as much of each and a panel of four; ``davinci`` a quarter, a panel of three, and a head
that reads only the surface features of the base LM's view (and its own LM's likelihoods).

Why not a judge LM that reads the whole judging prompt (:class:`~farmlib.annotators.lm_judge.LMJudge`)?
A million-parameter LM cannot follow a judging prompt (chapter 4 measures it: near chance), and a judging
prompt is 300–600 tokens. So the judging prompt's differences between members (position, batch, format,
instructions to prefer long or short answers) are named mechanisms on the answer
(:class:`farmlib.annotators.judges.JudgeConfig`), and reading is one forward pass per output and reader
(cached, shared by the 13 members); a comparison is the difference of two scores. Measured at ``tiny``
(pairs of the demonstrator's answers to ``sft``-split instructions, greedy gpt4 head against the people's
majority): 54–58 % when the heads read only the base LM, 69 % with the tuned LM. What the own-sample pairs and the LM's states changed (in the build where
they landed, 4903daf; greedy gpt4 head against the people's majority, before → after): held-out SFT pairs
64.6 → 64.9 %; the reference's answers against SFT 10k's on the eval set 53.2 → 61.3 %; over the leaderboard,
the rank correlation of the judges' win-rates with the people's went 0.60 → 0.78 (chapter 14), while the pool's
agreement on SFT pairs went 59.0 → 57.4 % (chapter 4). What knowing the answers changed (tiny, chapter 4's held-out
SFT pairs, against the people's majority, before → after): ``p_sim^eval`` 54.8 → 62.9 %, ``p_sim^single``
63.6 → 69.3 %, ``p_sim^ann``'s variance 0.43 (unchanged within noise); on those demonstrator pairs at the logit
scale then chosen the pool went 57.1 → 64.9 %.

The world is used *here*, to write the demonstrations and to write and label the makers' pairs. At judging
time a judge holds two readers (LMs and a tokenizer), a copy of the world's knowledge base (the knowing families)
and a weight vector, nothing else: never the world, its true reward or its people (tests check it).
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from farmlib.artifacts import write_json
from farmlib.data import paired
from farmlib.paper import ANNOTATORS
from farmlib.seeding import matvec
from farmlib.world import DEMONSTRATOR, EXPERT, Writer
from farmlib.world.degenerate import CORRUPTIONS
from farmlib.world.vocabulary import words


@dataclass(frozen=True)
class FamilyConfig:
    """What one judge family learned from (never R*'s weights)."""

    name: str
    pairs: int  # comparisons its makers collected, at scale 1 (times the profile's scale)
    reads: str = "fluency"  # what its head reads (capacity): all (LM states too) | fluency | surface
    labellers: int = 8  # people on the makers' panel (each pair: one of them, one noisy label)
    labeller_seed: int = 1
    degenerate: float = 0.2  # share of pairs that set a correct answer against a corruption of it
    failures: float = 0.0  # share of pairs that set two corruptions of one answer against each other
    same_writer: float = 0.5  # share of the other pairs that are two answers of one writer
    demos: int = 0  # expert demonstrations its own LM was instruction-tuned on, at scale 1 (0: base LM only)
    own: int = 0  # comparisons of its own LM's samples (two per instruction) its panel labelled, at scale 1
    tuned_reads: str = "fluency_only"  # what its head reads of its own LM: fluency_only | all (the LM's states too)
    knows: bool = False  # it knows the world's facts and its tasks' answers (farmlib.annotators.knowledge)
    demo_epochs: float = 3.0  # epochs of that instruction tuning
    l2: float = 1e-3  # weight decay of the head
    steps: int = 300  # full-batch optimizer steps
    lr: float = 0.03
    seed: int = 0


#: The three families (pairs at scale 1, times the profile's scale).
JUDGE_FAMILIES: dict[str, FamilyConfig] = {
    "gpt4": FamilyConfig("gpt4", pairs=8000, reads="fluency", labellers=8, labeller_seed=101, degenerate=0.3,
                         failures=0.15, demos=20_000, demo_epochs=3, own=8000, tuned_reads="all", knows=True),
    "chatgpt": FamilyConfig("chatgpt", pairs=4000, reads="fluency", labellers=4, labeller_seed=202, degenerate=0.15,
                            failures=0.075, demos=10_000, demo_epochs=2, own=4000, knows=True),
    # a Davinci head that did not know the answers preferred the wrong one to the right reference in 64 % of such pairs
    "davinci": FamilyConfig("davinci", pairs=2000, reads="surface", labellers=3, labeller_seed=303,
                            degenerate=0.05, failures=0.025, demos=5_000, demo_epochs=2, own=2000, knows=True),
}

#: The writers whose answers the makers collected (the world's writers, of mixed care and style).
MAKERS_WRITERS = (
    DEMONSTRATOR, EXPERT,
    Writer("hurried", accuracy=0.6, coverage=0.25, p_list=0.1, p_preamble=0.2, p_closing=0.0),
    Writer("rambler", accuracy=0.75, coverage=0.6, p_list=0.3, p_preamble=0.5, p_closing=0.4, p_ramble=0.15),
    Writer("lister", accuracy=0.7, coverage=0.5, p_list=0.9),
)



def judges_key() -> dict:
    """What makes the simulated judges what they are (families, head format, calibration grid): part of
    the key of every artifact built from their labels (:meth:`farmlib.pipeline.Farm.artifact`), so a
    change of the judges never reuses labels of the old ones. ``code``: the digest of the judges' code (how they
    are trained, read and pooled: :func:`farmlib.provenance.modules_digest`)."""
    from farmlib.annotators.people import crowd_key
    from farmlib.provenance import modules_digest

    return {"families": {f: asdict(c) for f, c in JUDGE_FAMILIES.items()},
            "code": modules_digest(__name__, "farmlib.annotators.judges"),
            "calibration": CALIBRATION, "corruptions": list(CORRUPTIONS),  # the makers' degenerate kinds
            "people": crowd_key()}  # the makers' panels are people


def makers_pairs(world, records: list[dict], fam: FamilyConfig, n: int, seed: int = 0) -> list[dict]:
    """``n`` comparisons on ``records``' instructions (cycled), labelled by the family's panel."""
    from farmlib.annotators.people import Crowd

    rng = random.Random(f"makers-{fam.name}-{seed}")
    kinds = list(CORRUPTIONS)
    pairs: list[dict] = []
    i = 0
    while len(pairs) < n and i < 20 * n + 100:
        rec = records[i % len(records)]
        i += 1
        wa = rng.choice(MAKERS_WRITERS)
        a = world.write(rec, wa, rng)
        u = rng.random()
        if u < fam.degenerate:
            b = CORRUPTIONS[rng.choice(kinds)](a, rec, world, rng)
        elif u < fam.degenerate + fam.failures:
            first, second = rng.sample(kinds, 2)
            a, b = CORRUPTIONS[first](a, rec, world, rng), CORRUPTIONS[second](a, rec, world, rng)
        else:  # half the time two answers of the same writer, else of two writers
            b = world.write(rec, wa if rng.random() < fam.same_writer else rng.choice(MAKERS_WRITERS), rng)
        if words(a) == words(b):
            continue
        if rng.random() < 0.5:
            a, b = b, a
        pairs.append({"instruction": rec["instruction"], "input": rec.get("input", ""), "output_1": a, "output_2": b})
    panel = Crowd(world, n_people=fam.labellers, seed=fam.labeller_seed, name=f"{fam.name}-makers")
    return panel.annotate_pairs(pairs, seed=seed)


def own_pairs(farm, fam: FamilyConfig, lm_path: str) -> list[dict]:
    """Comparisons of the family's own tuned LM's samples: two samples (temperature 1) for each of the first
    ``own × scale`` instructions of the ``unlabeled`` split, identical pairs dropped, labelled by the family's
    panel. As an LLM's makers labelled their own model's samples: the errors a *model* makes (a fluent wrong
    answer, a ramble off the topic), which the world's writers never make."""
    from farmlib.annotators.people import Crowd

    n = min(max(16, round(fam.own * farm.profile.scale)), len(farm.splits()["unlabeled"]))
    a, b = (farm.samples(lm_path, "unlabeled", temperature=1.0, seed=s, generator=f"judge_lm-{fam.name}", n=n)
            for s in (31, 32))
    pairs = paired(a, b, same=words)
    panel = Crowd(farm.world, n_people=fam.labellers, seed=fam.labeller_seed, name=f"{fam.name}-makers")
    return [r for r in panel.annotate_pairs(pairs, seed=fam.seed + 1) if r["preference"] in (1, 2)]


def fit_head(fw: torch.Tensor, fl: torch.Tensor, fam: FamilyConfig) -> tuple[torch.Tensor, list[dict]]:
    """A linear Bradley–Terry head on features of the chosen (``fw``) and rejected (``fl``) outputs,
    fitted full-batch on standardised features; returned in raw feature units."""
    from farmlib.methods.reward_model import bt_loss

    both = torch.cat([fw, fl])
    mu, sd = both.mean(0), both.std(0) + 1e-4
    zw, zl = (fw - mu) / sd, (fl - mu) / sd
    g = torch.Generator().manual_seed(fam.seed)
    w = (0.01 * torch.randn(fw.size(1), generator=g)).requires_grad_(True)
    opt = torch.optim.Adam([w], lr=fam.lr, weight_decay=fam.l2)
    history = []
    for step in range(fam.steps):
        loss = bt_loss(matvec(zw, w), matvec(zl, w))
        opt.zero_grad()
        loss.backward()
        opt.step()
        history.append({"step": step, "loss": loss.item()})
    return (w.detach() / sd), history


def n_pairs(farm, fam: FamilyConfig) -> int:
    """The family's pairs at the farm's profile (``pairs`` is at scale 1)."""
    return max(16, round(fam.pairs * farm.profile.scale))


def n_demos(farm, fam: FamilyConfig) -> int:
    """The expert demonstrations the family's LM is tuned on at the farm's profile (0: it has none)."""
    return max(16, round(fam.demos * farm.profile.scale)) if fam.demos > 0 else 0


def judge_lm(farm, fam: FamilyConfig) -> str | None:
    """The family's own instruction-tuned LM (an artifact ``judge_lm``), or None if it has none
    (``demos == 0``): the world's base LM fine-tuned on the expert writer's answers to ``demos × scale``
    instructions of the ``unlabeled`` split (the makers' demonstrations: more of them for a stronger family).
    An LM that learned to answer instructions finds a correct, on-topic answer likelier than a wrong one;
    this is how a judge comes to know what the task asks — by having learned to do it, as an LLM judge
    has — without ever holding the world."""
    if fam.demos <= 0:
        return None
    from farmlib.profiles import TrainConfig
    from farmlib.world import format_prompt

    recs = farm.splits()["unlabeled"][:n_demos(farm, fam)]
    rng = random.Random(f"judge-demos-{fam.name}-{fam.seed}")
    pairs = [(format_prompt(r["instruction"], r["input"]), farm.world.write(r, EXPERT, rng)) for r in recs]
    train = TrainConfig(epochs=fam.demo_epochs, lr=farm.profile.sft.lr, batch_size=farm.profile.sft.batch_size,
                        seed=fam.seed)
    return farm.finetune("judge_lm", {"family": fam.name, "demos": len(pairs), "writer": EXPERT.name,
                                      "data": farm.data_key()}, pairs, train, start=farm.base_model())


def train_judge(farm, fam: FamilyConfig) -> str:
    """The family's head: an artifact with ``head.pt`` (weights in raw feature units, the feature
    indices it reads, and its tuned LM's folder relative to the head's) and ``train_info.json``. Its
    readers are the farm's base LM (:meth:`Farm.judge_reader`) and the family's tuned LM (:func:`judge_lm`)."""
    import os

    from farmlib.annotators.judges import TextReader, feature_index, read_features
    from farmlib.annotators.knowledge import Knowledge, KnowledgeReader
    from farmlib.methods.common import loser, winner

    reader = farm.judge_reader()
    n = n_pairs(farm, fam)
    t0 = time.time()
    lm_path = judge_lm(farm, fam)  # an artifact of its own: its path is part of the head's key
    t_lm = time.time() - t0
    cfg = {"base": farm.base_model(), "family": asdict(fam), "n": n, "data": farm.data_key(),
           "max_length": reader.max_length, "lm": lm_path, "corruptions": list(CORRUPTIONS)}

    def build(work: Path) -> None:
        t0 = time.time()
        pairs = makers_pairs(farm.world, farm.splits()["unlabeled"], fam, n, seed=fam.seed)
        own = own_pairs(farm, fam, lm_path) if lm_path and fam.own > 0 else []
        pairs = pairs + own
        t_data = time.time() - t0
        idx = feature_index(fam.reads, reader.layers, reader.hidden)
        tuned = tuned_idx = None
        if lm_path:
            tuned = TextReader.load(lm_path, reader.tok, farm.profile.device, reader.max_length)
            tuned_idx = feature_index(fam.tuned_reads, tuned.layers, tuned.hidden)
        knows = KnowledgeReader(Knowledge.of(farm.world)) if fam.knows else None
        fw = read_features(reader, idx, tuned, tuned_idx, [dict(r, output=winner(r)) for r in pairs], knowledge=knows)
        fl = read_features(reader, idx, tuned, tuned_idx, [dict(r, output=loser(r)) for r in pairs], knowledge=knows)
        t_read = time.time() - t0 - t_data
        weight, history = fit_head(fw, fl, fam)
        margin_sd = matvec(fw - fl, weight).std().item()
        weight = weight / max(margin_sd, 1e-6)  # one unit = the spread of its margins on its makers' pairs
        acc = (matvec(fw, weight) > matvec(fl, weight)).float().mean().item()
        torch.save({"weight": weight, "index": idx, "tuned": os.path.relpath(lm_path, work) if lm_path else "",
                    "tuned_index": tuned_idx or [], "knows": fam.knows}, work / "head.pt")
        write_json(work / "history.json", history)
        write_json(work / "train_info.json", {"seconds": time.time() - t0 + t_lm, "lm_seconds": t_lm, "data_seconds": t_data,
                                              "read_seconds": t_read, "pairs": len(pairs), "own_pairs": len(own), "features": fw.size(1),
                                              "train_accuracy": acc, "family": asdict(fam),
                                              "margin_sd_raw": margin_sd,
                                              "final_loss": history[-1]["loss"] if history else math.nan})

    return farm.artifact("judge_head", cfg, build)


#: The one calibrated knob: how decisive the judges are. Each head is stored in units of the spread of
#: its margins on its makers' pairs; a member's logit is ``logit_scale × margin``, sampled at temperature 1
#: as the paper's members were. A calibrated model would say ``logit_scale ≈ 1`` (the makers' labels were
#: noisy, so its margins are small); LLM judges are sharper than their evidence. The scale is chosen from
#: ``grid`` so that ``p_sim^eval``'s draws disagree with each other as often as the paper's pool's did (its
#: variance, 0.26) on the *calibration pairs* (:func:`calibration_pairs`): a property of the pool alone, so the
#: choice reads no person's label, and the pool's agreement with the people is measured, never aimed at, on
#: disjoint held-out pairs (chapter 4). The grid's agreement column is reported beside it.
CALIBRATION = {"knob": "logit scale", "grid": (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0),
               "target": "p_sim_eval variance", "target_value": ANNOTATORS["p_sim_eval"]["variance"], "draws": 4}


def calibration_pairs(farm) -> list[dict]:
    """Pairs of two SFT 10k samples (temperature 1, as the preference data draws them) for the first instructions
    of the ``sft`` split, as many as the val split has: the kind of pair the pool labels, on other instructions
    than chapter 4's held-out pairs (``val``) and the judges' training pairs (``unlabeled``). SFT 10k was trained
    on these instructions; chapter 4 sets the pool's statistics here beside the held-out ones, so a gap between
    the two shows. Only the small families' instructions recur across these splits (``farmlib.world.splits``)."""
    from farmlib.annotators.validation import sft_pairs

    return sft_pairs(farm, split="sft", n=len(farm.splits()["val"]))


def calibrate(farm) -> dict:
    """Try each logit scale of ``CALIBRATION["grid"]`` on the trained families (the reader caches what it
    read, so the grid costs only the sampling) and keep the one whose pool's variance comes closest to the
    target on the calibration pairs; the people label the same pairs only for the grid's other columns.
    Cached (``judge_calibration``)."""
    from farmlib.annotators.judges import JudgeLM, pool_eval
    from farmlib.annotators.people import Crowd
    from farmlib.annotators.validation import annotator_draws, crowd_labels, stats

    cfg = {"judges": judges_key(), "base": farm.base_model(), "data": farm.data_key()}

    def build(work: Path) -> None:
        t0 = time.time()
        pairs = calibration_pairs(farm)
        humans = crowd_labels(Crowd(farm.world), pairs, n=CALIBRATION["draws"])
        heads = {f: train_judge(farm, c) for f, c in JUDGE_FAMILIES.items()}
        rows, tuned = [], farm.annotators.tuned_readers  # each tuned LM loaded once per farm
        for k in CALIBRATION["grid"]:
            lms = {f: JudgeLM.load(h, farm.judge_reader(), name=f, logit_scale=k, tuned_readers=tuned,
                                   store=farm.judge_scores(h), knowledge=farm.annotators.knowledge()) for f, h in heads.items()}
            draws, _ = annotator_draws(pool_eval(lms), pairs, n=CALIBRATION["draws"])
            rows.append({"logit_scale": k, **stats(draws, humans, pairs)})
        best = min(rows, key=lambda r: abs(r["variance"] - CALIBRATION["target_value"]))
        write_json(work / "calibration.json", {"logit_scale": best["logit_scale"], "rows": rows,
                                               "n_pairs": len(pairs), "seconds": time.time() - t0})

    from farmlib.artifacts import read_json

    return read_json(Path(farm.artifact("judge_calibration", cfg, build)) / "calibration.json")
