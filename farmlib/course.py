"""The course page's sessions (``book/course.md``): which chapters each week runs and how long they took where the
book was built.

``farm book`` writes :func:`times_page` to :data:`TIMES_PAGE` just before it renders the HTML, from the seconds each
chapter took the last time it built an artifact (trained, sampled or judged what it shows: a cold run), else the
last time it ran, as ``runs/<profile>/metrics/build_times.json`` keeps them (``cold``, then the chapters' own
fields); the course page includes it. So the table a lecturer plans with is the machine's own, never a number
copied from another build, and a rebuild that only reads its artifacts does not replace what building them cost.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

#: Where ``farm book`` writes the table, beside the executed chapters (a build product, like them).
TIMES_PAGE = Path("book") / "chapters" / "_course_times.md"

#: The six weeks: number, session, chapters (the notebooks' names).
WEEKS = [
    (1, "The world, the model, the metric", ["01_farmworld", "02_sft", "03_evaluation"]),
    (2, "Simulating the annotators", ["04_annotators"]),
    (3, "Reward models and methods without RL",
     ["05_reward_model", "06_feedme", "07_reward_conditioning", "08_dpo", "09_best_of_n"]),
    (4, "Reinforcement learning from the reward model", ["10_expert_iteration", "11_ppo", "12_quark", "13_kto"]),
    (5, "Reading the results", ["14_leaderboard", "15_length", "16_overoptimisation"]),
    (6, "Does the simulator predict people?", ["17_label_noise", "18_end_to_end", "19_instruction_mix"]),
]


def machine() -> str:
    """The CPU's name (Linux: ``/proc/cpuinfo``'s model name, else :func:`platform.processor`) and its cores."""
    name = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{name or platform.processor() or platform.machine()}, {os.cpu_count() or 1} cores"


def _seconds(s: float | None) -> str:
    return "–" if s is None else f"{s:,.0f}"


def sessions(seconds: dict[str, float], cpu: dict[str, float]) -> list[dict]:
    """One row per week: its chapters with their wall-clock and CPU seconds (None: never ran here), and the
    session's totals over the chapters that ran."""
    rows = []
    for week, title, chapters in WEEKS:
        ran = [c for c in chapters if c in seconds]
        rows.append({"week": week, "session": title, "chapters": chapters,
                     "seconds": {c: seconds.get(c) for c in chapters}, "cpu": {c: cpu.get(c) for c in chapters},
                     "total": sum(seconds[c] for c in ran) if ran else None,
                     "total_cpu": sum(cpu[c] for c in ran if c in cpu) if any(c in cpu for c in ran) else None})
    return rows


def times_page(seconds: dict[str, float], cpu: dict[str, float], profile: str, where: str | None = None) -> str:
    """The course page's table of sessions in Markdown, with the sentence that reads it: ``seconds`` and ``cpu``
    per chapter (``build_times.json``'s fields), ``profile`` the book's, ``where`` the machine (default
    :func:`machine`)."""
    rows = sessions(seconds, cpu)
    lines = ["| week | session | chapter: seconds (CPU seconds) | the session: seconds (CPU seconds) |",
             "|---|---|---|---|"]
    for r in rows:
        each = ", ".join(f"{int(c[:2])}: {_seconds(r['seconds'][c])} ({_seconds(r['cpu'][c])})" for c in r["chapters"])
        lines.append(f"| {r['week']} | {r['session']} | {each} | {_seconds(r['total'])} ({_seconds(r['total_cpu'])}) |")
    timed = [r for r in rows if r["total_cpu"] is not None]
    text = (f"The times are this book's: profile `{profile}`, built on {where or machine()}; each chapter's "
            "wall-clock seconds the last time it built what it shows (trained, sampled or judged it: what a first "
            "build costs), else the last time it ran (then it only read what was built already), and in brackets "
            "its CPU seconds. Two chapters run side by side, so a wall clock is shared with another chapter and "
            "counts the time spent waiting for an artifact the other is building; the CPU seconds are the "
            "chapter's own work. Once built, a chapter re-executes from its artifacts in a fraction of that. A dash marks a "
            "chapter whose time this book's builds have not recorded.")
    if len(timed) >= 2:
        top = sorted(timed, key=lambda r: -r["total_cpu"])[:2]
        share = sum(r["total_cpu"] for r in top) / sum(r["total_cpu"] for r in timed)
        text += (f" Weeks {top[0]['week']} and {top[1]['week']} hold {share:.0%} of the work here "
                 f"({top[0]['total_cpu'] / 60:,.0f} and {top[1]['total_cpu'] / 60:,.0f} CPU-minutes): build their "
                 "chapters before the session, not in it.")
    return "\n".join(lines) + "\n\n" + text + "\n"


def write_times_page(root: Path, seconds: dict[str, float], cpu: dict[str, float], profile: str) -> Path:
    """Write :func:`times_page` under ``root`` (:data:`TIMES_PAGE`)."""
    path = Path(root) / TIMES_PAGE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(times_page(seconds, cpu, profile))
    return path
