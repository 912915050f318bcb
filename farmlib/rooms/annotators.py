"""The farm's annotators room: who labels pairs and who evaluates — the people, R*, the simulated judges (learned
in FarmWorld, real on real data, with their calibration) — and the preference data and win-rates they make.

Change how the judges are built or loaded, what feedback the methods learn from, or how an evaluation is
annotated: here (the judges themselves live in :mod:`farmlib.annotators`).
"""

from __future__ import annotations

from pathlib import Path

from farmlib.artifacts import read_json, write_json
from farmlib.data import paired
from farmlib.evaluation.win_rate import WinRate, preference_from_scores, win_rate
from farmlib.provenance import data_digest


def preference_draw(j: int) -> dict:
    """The seed and generator name of the ``j``-th SFT sample of each preference instruction: round ``j // 2`` of
    the preference data draws its output a (even ``j``) and b (odd ``j``) with seeds 11 + j."""
    return {"seed": 11 + j, "generator": "sft_" + "ab"[j % 2]}


class AnnotatorRoom:
    """Annotators, preference data and evaluation for one :class:`~farmlib.pipeline.Farm`."""

    def __init__(self, farm):
        self.farm = farm
        self._made: dict = {}  # annotators by (name, seed), the judges' models and readers
        self.tuned_readers: dict = {}  # each judge family's tuned LM, loaded once (shared with the calibration)

    # -- what an annotator is, as a key ------------------------------------------------------
    def judges_key(self) -> dict:
        """What makes the simulated judges what they are: the learned FarmWorld families
        (:func:`farmlib.annotators.learned.judges_key`) or the real pool (:func:`farmlib.real_judges.pool_key`)."""
        if self.farm.is_farmworld:
            from farmlib.annotators.learned import judges_key

            return judges_key()
        from farmlib.real_judges import pool_key

        return pool_key(self.farm.profile.real)

    def people_key(self) -> dict | None:
        """What FarmWorld's simulated people are (None on real data, whose people are released labels)."""
        if not self.farm.is_farmworld:
            return None
        from farmlib.annotators.people import crowd_key

        return crowd_key()

    # -- the annotators ------------------------------------------------------------------------
    def annotator(self, name: str = "p_sim_eval", seed: int = 0):
        """``p_sim_eval``, ``p_sim_ann``, ``p_sim_single`` (the learned judges, :meth:`judge_lms`), ``human``
        (the crowd) or ``true_reward`` (R*'s own labels, a ceiling: :mod:`farmlib.annotators.oracle`).

        One instance per (name, seed) is made and reused: an annotator draws its randomness from the
        ``seed`` of each ``annotate_pairs`` call, so reuse changes no label, and its judges' cached reads
        are shared by every later ``evaluate``."""
        from farmlib import annotators as A

        farm = self.farm
        makers = {"p_sim_eval": A.pool_eval, "p_sim_ann": A.pool_ann, "p_sim_single": A.single_judge}
        if not farm.is_farmworld:
            return self._real_annotator(name, seed)
        if name == "human":
            return A.Crowd(farm.world, seed=seed)
        if name == "true_reward":  # R*'s own labels: a ceiling, not a judge
            from farmlib.annotators.oracle import TrueRewardLabels

            return TrueRewardLabels(farm.world)
        if name not in makers:
            raise ValueError(f"unknown annotator {name!r}; choose from {sorted([*makers, 'human', 'true_reward'])}")
        key = ("annotator", name, seed)
        if key not in self._made:
            self._made[key] = makers[name](self.judge_lms(), seed=seed)
        return self._made[key]

    def _real_annotator(self, name: str, seed: int = 0):
        """The real pool (:class:`farmlib.real_judges.RealJudges`), or released people for ``human``."""
        farm = self.farm
        key = ("annotator", name, seed)
        if key in self._made:
            return self._made[key]
        real = farm.profile.real
        if name == "human":
            if not real.people:
                farm.not_in_real_world("fresh human labels (no released human annotations are configured: "
                                       "real.people)")
            from farmlib.real import ReleasedPeople, data_dir

            annotator = ReleasedPeople(data_dir(real.data_dir) / real.people)
        else:
            if "real_judges" not in self._made:
                from farmlib.real_judges import RealJudges

                # a judge that is the profile's own GGUF base model reads from its converted copy (loading the
                # file again would take minutes); any other judge model is loaded as named
                same = real.judges == "lm" and real.judge_model == farm.profile.model.pretrained
                self._made["real_judges"] = RealJudges(real, farm.root / "judge_cache.sqlite", farm.profile.device,
                                                       judge_model=farm.base_model() if same else None)
            annotator = self._made["real_judges"].pool(name, seed)
        self._made[key] = annotator
        return annotator

    def judge_reader(self):
        """The LM every judge reads text with: the base LM (pretrained on world text, never on
        instructions or preferences), loaded once per farm (:class:`farmlib.annotators.judges.TextReader`)."""
        if "judge_reader" not in self._made:
            from farmlib.annotators.judges import TextReader

            farm = self.farm
            self._made["judge_reader"] = TextReader.load(farm.base_model(), farm.tokenizer(), farm.profile.device,
                                                         farm.profile.model.max_length)
        return self._made["judge_reader"]

    def judge_lms(self) -> dict:
        """The three judge families (``gpt4``, ``chatgpt``, ``davinci``) at the calibrated logit scale
        (:func:`farmlib.annotators.learned.calibrate`): heads trained once (artifacts ``judge_head``) on the
        shared reader, loaded once per farm, so every pool shares their cached scores."""
        if "judge_lms" not in self._made:
            from farmlib.annotators.judges import JudgeLM
            from farmlib.annotators.learned import JUDGE_FAMILIES, calibrate, train_judge

            k = calibrate(self.farm)["logit_scale"]
            heads = {f: train_judge(self.farm, cfg) for f, cfg in JUDGE_FAMILIES.items()}
            self._made["judge_lms"] = {f: JudgeLM.load(h, self.judge_reader(), name=f, logit_scale=k,
                                                       tuned_readers=self.tuned_readers, store=self.judge_scores(h),
                                                       knowledge=self.knowledge())
                                       for f, h in heads.items()}
        return self._made["judge_lms"]

    def knowledge(self):
        """What the judges know of the world's facts and answers, read once per farm
        (:class:`farmlib.annotators.knowledge.KnowledgeReader`; never the true reward)."""
        if "knowledge" not in self._made:
            from farmlib.annotators.knowledge import Knowledge, KnowledgeReader

            self._made["knowledge"] = KnowledgeReader(Knowledge.of(self.farm.world))
        return self._made["knowledge"]

    def judge_scores(self, head: str):
        """The on-disk store of a judge head's scores (``<runs>/<profile>/judge_scores/<head>.sqlite``), one
        per farm: what a family read in one chapter, the next chapter does not read again."""
        from farmlib.annotators.judges import ScoreStore

        stores = self._made.setdefault("judge_scores", {})
        if head not in stores:
            stores[head] = ScoreStore(Path(head).parent.parent / "judge_scores" / f"{Path(head).name}.sqlite")
        return stores[head]

    def judge_train_info(self) -> dict[str, dict]:
        """Each judge family's ``train_info.json`` (seconds, pairs, final loss)."""
        from farmlib.annotators.learned import JUDGE_FAMILIES, train_judge

        return {f: read_json(Path(train_judge(self.farm, cfg)) / "train_info.json") for f, cfg in JUDGE_FAMILIES.items()}

    # -- feedback and evaluation ---------------------------------------------------------------
    def preference_data(self, annotator: str = "p_sim_ann", n: int | None = None, seed: int = 0) -> list[dict]:
        """Pairwise feedback: two SFT samples (temperature 1) for each of the first ``n`` instructions of the
        preference split, labelled by ``annotator`` (records with output_1, output_2, preference; unlabelled pairs
        dropped). Labels are nearly free in simulation, so ``n`` may exceed the split: each further round over
        the split draws another two samples per instruction (round k: seeds 11 + 2k and 12 + 2k)."""
        farm = self.farm
        n = n if n is not None else farm.profile.n_preference
        sft = farm.sft_model()
        size = len(farm.splits()["preference"])
        a, b = [], []
        for k in range(-(-(n or size) // size)):  # rounds over the split
            m = min(size, (n or size) - k * size)  # the instructions of this round
            a += farm.samples(sft, "preference", temperature=1.0, n=m, **preference_draw(2 * k))
            b += farm.samples(sft, "preference", temperature=1.0, n=m, **preference_draw(2 * k + 1))
        cfg = {"a": len(a), "sft": farm.key(sft), "annotator": annotator, "seed": seed, "n": n,
               "pairs": data_digest([a, b])}

        def build(work: Path) -> None:
            pairs = paired(a, b, same=str)
            write_json(work / "preferences.json", self.annotator(annotator, seed).annotate_pairs(pairs, seed=seed))

        path = Path(farm.artifact("preferences", cfg, build))
        return [r for r in read_json(path / "preferences.json") if r["preference"] in (1, 2)]

    def preference_samples(self, k: int) -> list[list[dict]]:
        """``k`` SFT samples (temperature 1) of every preference instruction, ``[j][i]``: sample j of instruction
        i, drawn with the seeds of :meth:`preference_data`'s rounds (:func:`preference_draw`). They are that
        method's outputs where its round covers the whole split; a round over fewer instructions samples them in
        other batches, so its outputs differ."""
        farm = self.farm
        sft, size = farm.sft_model(), len(farm.splits()["preference"])
        return [farm.samples(sft, "preference", temperature=1.0, n=size, **preference_draw(j)) for j in range(k)]

    def evaluate(self, outputs: list[dict], annotator: str = "p_sim_eval", seed: int = 0,
                 reference: list[dict] | None = None) -> tuple[WinRate, list[dict]]:
        """Win-rate of ``outputs`` against the reference on the eval set, and the annotations;
        ``reference``: the reference's outputs on the same instructions (default: the whole eval set)."""
        pairs = self.farm.pairs_with_reference(outputs, reference)  # output_1 = the reference's
        ann = self.annotator(annotator, seed).annotate_pairs(pairs, seed=seed)
        return win_rate(a["preference"] for a in ann), ann

    def true_rewards(self, outputs: list[dict]) -> list[float]:
        """R* of each output (FarmWorld only)."""
        farm = self.farm
        if not farm.is_farmworld:
            farm.not_in_real_world("the true reward R*")
        return [farm.world.true_reward(r["instruction"], r["input"], r["output"]) for r in outputs]

    def annotate_true(self, outputs: list[dict], reference: list[dict] | None = None) -> list[dict]:
        """AlpacaEval-format annotations, judged by the true reward R* (what a person feels)."""
        farm = self.farm
        if not farm.is_farmworld:
            farm.not_in_real_world("the true reward R*")
        ann = []
        for pair in farm.pairs_with_reference(outputs, reference):
            r1 = farm.world.true_reward(pair["instruction"], pair["input"], pair["output_1"])
            r2 = farm.world.true_reward(pair["instruction"], pair["input"], pair["output_2"])
            ann.append(dict(pair, preference=preference_from_scores(r1, r2), annotator="true_reward"))
        return ann

    def evaluate_true(self, outputs: list[dict], reference: list[dict] | None = None) -> WinRate:
        return win_rate(a["preference"] for a in self.annotate_true(outputs, reference))
