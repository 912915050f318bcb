"""The farm: get-or-build of every expensive result for one profile, a facade over three rooms.

``Farm(profile)`` answers what a chapter asks (``farm.sft_model()``, ``farm.samples(sft)``, ``farm.evaluate(outs)``);
each answer is an artifact keyed by its config, inputs and code (:mod:`farmlib.artifacts`), so a chapter runs on its
own, a warm rerun is instant and an interrupted build resumes. Each question has one room, which the farm's method
of the same name asks: :class:`~farmlib.rooms.data.DataRoom` (``farm.data``: splits, tokenizer, references),
:class:`~farmlib.rooms.models.ModelRoom` (``farm.models``: base, SFT, samples, fine-tunes, method configs) and
:class:`~farmlib.rooms.annotators.AnnotatorRoom` (``farm.annotators``: people, R*, judges, feedback, evaluation).
A profile with a ``real`` block runs the same calls on real data (:mod:`farmlib.real`); what exists only in
FarmWorld (``world``, R*, the crowd, the writers) raises :class:`farmlib.real.NotInRealWorld`.
"""

from __future__ import annotations

import dataclasses
from functools import wraps
from pathlib import Path

from farmlib.artifacts import ArtifactStore, runs_root, write_json
from farmlib.profiles import Profile, get_profile
from farmlib.rooms.annotators import AnnotatorRoom
from farmlib.rooms.data import DataRoom
from farmlib.rooms.models import ModelRoom
from farmlib.seeding import deterministic_torch
from farmlib.world import FarmWorld


def _ask(room: str, cls, name: str):
    """A facade method: ``farm.<name>(...)`` is ``farm.<room>.<name>(...)``, with that method's signature and doc."""
    @wraps(getattr(cls, name))
    def method(self, *args, **kwargs):
        return getattr(getattr(self, room), name)(*args, **kwargs)
    return method


class Farm:
    """Artifacts, data, models and annotators of one profile; making one turns on torch's deterministic kernels
    (:func:`farmlib.seeding.deterministic_torch`)."""

    def __init__(self, profile: str | Profile = "tiny", root: str | Path | None = None, **overrides):
        self.profile = get_profile(profile, **overrides)
        deterministic_torch(device=self.profile.device)
        # absolute, so that artifact paths (and the keys made from them, :meth:`key`) do not depend on the
        # working directory or on how the root was written
        self.root = (Path(root) if root is not None else runs_root() / self.profile.name).resolve()
        self.store = ArtifactStore(self.root)
        self._world = FarmWorld(self.profile.world_seed) if self.profile.real is None else None
        self.data, self.models, self.annotators = DataRoom(self), ModelRoom(self), AnnotatorRoom(self)

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
        """One rendered line (Markdown; outside a notebook, the line) saying what a chapter cannot show on real
        data, and why; on FarmWorld, None. The chapter displays it and shows what it can."""
        if self.is_farmworld:
            return None
        line = f"> **Real data ({self.profile.name}).** {text}"
        try:
            from IPython.display import Markdown
        except ImportError:
            return line
        return Markdown(line)

    def evaluation_annotators(self, wanted: tuple[str, ...] = ("p_sim_eval", "human")) -> tuple[str, ...]:
        """The annotators of ``wanted`` that exist in this world: all in FarmWorld; on real data ``human``
        only where the profile names released human annotations (``real.people``)."""
        if self.is_farmworld:
            return tuple(wanted)
        return tuple(a for a in wanted if a != "human" or self.profile.real.people)

    # -- artifacts --------------------------------------------------------------------------
    def key(self, path: str) -> str:
        """How an artifact path enters another artifact's config: relative to the farm's root (so
        keys do not depend on the working directory); a hub name or outside path stays as it is."""
        try:
            return str(Path(path).resolve().relative_to(self.root.resolve()))
        except ValueError:
            return str(path)

    def artifact(self, kind: str, inputs: dict, build) -> str:
        """Get-or-build the artifact made by ``build(workdir)`` from ``inputs``: its key is the hash of ``inputs``
        and of ``build``'s code (:mod:`farmlib.provenance`), where config dataclasses count by their fields,
        artifact paths by :meth:`key`, the name of a simulated annotator (``p_sim_*`` under ``annotator`` or
        ``labels``) by what its judges are (:meth:`judges_key`), and FarmWorld's ``human`` by what its people are."""
        judges, people = self.annotators.judges_key(), self.annotators.people_key()

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

    def write_metrics(self, chapter: str, metrics: dict) -> None:
        """Save a chapter's headline numbers to ``runs/<profile>/metrics/<chapter>.json`` (on real data marked
        ``"real": true``), with the resolved profile they were measured with (``resolved_profile``: every field, as a
        profile file resolved); a run with overrides (``metrics["run"]`` is ``name[field=value,...]``) to a file of that
        name, so an exercise never overwrites the chapter's own. Returns nothing (a chapter's last line shows nothing)."""
        from farmlib.book import note_metrics_written

        run = str(metrics.get("run", ""))
        path = self.root / "metrics" / f"{run.replace('/', '_') if run.startswith(chapter + '[') else chapter}.json"
        write_json(path, {"profile": self.profile.name, **({} if self.is_farmworld else {"real": True}), **metrics,
                          "resolved_profile": self.profile.to_dict()})
        note_metrics_written(path)

    # -- the rooms' questions, asked of the farm ----------------------------------------------
    data_key = _ask("data", DataRoom, "key")
    splits = _ask("data", DataRoom, "splits")
    tokenizer_path = _ask("data", DataRoom, "tokenizer_path")
    tokenizer = _ask("data", DataRoom, "tokenizer")
    pretraining_docs = _ask("data", DataRoom, "pretraining_docs")
    writer_outputs = _ask("data", DataRoom, "writer_outputs")
    reference_outputs = _ask("data", DataRoom, "reference_outputs")
    pairs_with_reference = _ask("data", DataRoom, "pairs_with_reference")

    base_model = _ask("models", ModelRoom, "base_model")
    sft_model = _ask("models", ModelRoom, "sft_model")
    finetune = _ask("models", ModelRoom, "finetune")
    load = _ask("models", ModelRoom, "load")
    samples = _ask("models", ModelRoom, "samples")
    method_config = _ask("models", ModelRoom, "method_config")
    run_name = _ask("models", ModelRoom, "run_name")

    judges_key = _ask("annotators", AnnotatorRoom, "judges_key")
    annotator = _ask("annotators", AnnotatorRoom, "annotator")
    judge_reader = _ask("annotators", AnnotatorRoom, "judge_reader")
    judge_lms = _ask("annotators", AnnotatorRoom, "judge_lms")
    judge_scores = _ask("annotators", AnnotatorRoom, "judge_scores")
    judge_train_info = _ask("annotators", AnnotatorRoom, "judge_train_info")
    preference_data = _ask("annotators", AnnotatorRoom, "preference_data")
    preference_samples = _ask("annotators", AnnotatorRoom, "preference_samples")
    evaluate = _ask("annotators", AnnotatorRoom, "evaluate")
    true_rewards = _ask("annotators", AnnotatorRoom, "true_rewards")
    annotate_true = _ask("annotators", AnnotatorRoom, "annotate_true")
    evaluate_true = _ask("annotators", AnnotatorRoom, "evaluate_true")
