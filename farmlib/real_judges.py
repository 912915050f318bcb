"""The 13-member judge pool on real data: the paper's prompts sent to real judges.

The members are :func:`farmlib.annotators.default_pool`'s configurations (5 GPT-4, 4 ChatGPT, 4
Davinci003; batch sizes, formats, in-context examples, prefer long/short) sent through our prompts to

* ``judges="chat"``: any OpenAI-compatible server at ``base_url`` (:class:`~farmlib.annotators.api_judge.ChatJudge`;
  ``models`` maps each family to a served model);
* ``judges="loopback"``: the same client against the loopback server of
  :mod:`farmlib.annotators.loopback`, started in this process (offline; it prefers the longer output):
  the tests and ``real-micro`` exercise the whole real path with it;
* ``judges="lm"``: a local HF causal LM (:class:`~farmlib.annotators.lm_judge.LMJudge`) at ``judge_model``,
  each member at its own temperature.

``p_sim_eval`` asks a random member per comparison, ``p_sim_ann`` mixes that with a fair coin (25 %
flips), ``p_sim_single`` is the GPT-4 batch-5 JSON member at temperature 0 (:class:`~farmlib.annotators.judges.Pool`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from farmlib.annotators.judges import Pool, default_pool

JUDGE_KINDS = ("loopback", "chat", "lm")


def pool_configs(real) -> list:
    """The 13 members as :class:`ChatJudgeConfig` (``base_url`` filled in later for loopback)."""
    from farmlib.annotators.api_judge import chat_configs

    return chat_configs(models=dict(real.models), base_url=real.base_url or None)


def pool_key(real) -> dict:
    """What makes the real pool what it is: part of every artifact key built from its labels (the loopback
    server's port is not: it changes every run)."""
    if real.judges not in JUDGE_KINDS:
        raise ValueError(f"unknown real.judges {real.judges!r}; choose from {', '.join(JUDGE_KINDS)}")
    members = [{"name": c.name, **c.answer_config()} for c in pool_configs(real)]
    where = {"loopback": "loopback", "chat": real.base_url, "lm": real.judge_model}[real.judges]
    return {"real_pool": members, "judges": real.judges, "where": where}


class RealJudges:
    """The real pool's members, built once per farm (a loopback server, when used, lives as long as it)."""

    def __init__(self, real, cache: str | Path, device: str = "cpu", judge_model: str | None = None):
        if real.judges not in JUDGE_KINDS:
            raise ValueError(f"unknown real.judges {real.judges!r}; choose from {', '.join(JUDGE_KINDS)}")
        self.real, self.cache, self.device = real, Path(cache), device
        self.judge_model = judge_model or real.judge_model  # where judges="lm" loads it from (a converted copy)
        self.server = None
        self._members: dict | None = None

    def members(self) -> dict:
        """The 13 members by name (each with ``annotate_pairs``)."""
        if self._members is None:
            self._members = {c.name: self._judge(c) for c in self._configs()}
        return self._members

    def _configs(self) -> list:
        configs = pool_configs(self.real)
        if self.real.judges == "loopback":
            from farmlib.annotators.loopback import LoopbackServer

            if self.server is None:
                self.server = LoopbackServer().__enter__()
            configs = [dataclasses.replace(c, base_url=self.server.url) for c in configs]
        return configs

    def _judge(self, config):
        if self.real.judges == "lm":
            from farmlib.annotators.lm_judge import LMJudge
            from farmlib.lm.model import load_model, load_tokenizer

            if not self.judge_model:
                raise ValueError("real.judges='lm' needs real.judge_model (a local folder or hub name)")
            if "lm" not in self.__dict__:
                self.lm = (load_model(self.judge_model, self.device), load_tokenizer(self.judge_model))
                self.reads: dict = {}  # every member reads a prompt alike: one read for the pool
            return LMJudge(*self.lm, name=config.name, temperature=config.temperature, seed=config.seed,
                           reads=self.reads)
        from farmlib.annotators.api_judge import ChatJudge

        return ChatJudge(config, cache=self.cache)

    def pool(self, name: str, seed: int = 0):
        """``p_sim_eval``, ``p_sim_ann`` or ``p_sim_single``."""
        if name == "p_sim_single":
            base = next(c for c in self._configs() if c.name == default_pool()[1].name)
            return self._judge(dataclasses.replace(base, name="p_sim_single", temperature=0.0))
        flips = {"p_sim_eval": 0.0, "p_sim_ann": 0.5}
        if name not in flips:
            raise ValueError(f"unknown annotator {name!r}; choose from p_sim_eval, p_sim_ann, p_sim_single, human")
        return Pool(list(self.members().values()), flip=flips[name], name=name, seed=seed)

    def close(self) -> None:
        if self.server is not None:
            self.server.__exit__(None, None, None)
            self.server = None


def style_table(annotators: dict, pairs: list[dict], seed: int = 0):
    """What each annotator prefers, without people: P(longer), P(list) and its order consistency (the share
    of pairs it labels the same when output_1 and output_2 are swapped; 1 = no position effect), and the
    share of missing labels. One row per annotator (a DataFrame)."""
    import pandas as pd

    from farmlib.annotators.statistics import prefers_lists, prefers_longer

    swapped = [dict(r, output_1=r["output_2"], output_2=r["output_1"]) for r in pairs]
    rows = {}
    for name, a in annotators.items():
        one, two = a.annotate_pairs(pairs, seed=seed), a.annotate_pairs(swapped, seed=seed)
        both = [(x["preference"], 3 - y["preference"]) for x, y in zip(one, two)
                if x["preference"] in (1, 2) and y["preference"] in (1, 2)]
        rows[name] = {"p_longer": prefers_longer(one), "p_list": prefers_lists(one),
                      "order_consistency": sum(p == q for p, q in both) / len(both) if both else float("nan"),
                      "missing": sum(x["preference"] is None for x in one) / max(len(one), 1)}
    return pd.DataFrame.from_dict(rows, orient="index")
