"""Annotators: simulated people (``people``), learned judges and their pools (``judges``; how they are
trained: ``learned``), the
paper's statistics (``statistics``, ``validation``), and real judges behind our prompts
(``prompts``): an OpenAI-compatible API (``api_judge``, with an on-disk ``cache`` and a fault-injecting
``loopback`` server for tests) or a local HF model (``lm_judge``)."""

from farmlib.annotators.base import Annotator, annotate_samples
from farmlib.annotators.judges import (
    JudgeConfig,
    JudgeLM,
    LearnedJudge,
    Pool,
    TextReader,
    default_pool,
    members,
    pool_ann,
    pool_eval,
    single_judge,
)
from farmlib.annotators.people import Crowd, Person
from farmlib.annotators.statistics import (
    agreement_with,
    heldout_agreement,
    injection_effect,
    majority,
    prefers_lists,
    prefers_longer,
    style_preferences,
)

__all__ = ["Annotator", "Crowd", "JudgeConfig", "JudgeLM", "LearnedJudge", "Person", "Pool", "TextReader", "agreement_with",
           "annotate_samples", "default_pool", "heldout_agreement", "injection_effect", "majority", "members",
           "pool_ann", "pool_eval",
           "prefers_lists", "prefers_longer", "single_judge", "style_preferences"]
