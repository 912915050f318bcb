"""The course page's table of sessions is computed from the build's own times, never copied."""

import re
from pathlib import Path

from farmlib.book import chapters
from farmlib.course import TIMES_PAGE, WEEKS, sessions, times_page, write_times_page

ROOT = Path(__file__).resolve().parents[1]


def test_every_chapter_but_the_claims_has_a_week():
    weekly = [c for _, _, cs in WEEKS for c in cs]
    assert len(weekly) == len(set(weekly))
    assert sorted(weekly) == sorted(nb.stem for nb in chapters(ROOT) if nb.stem != "20_claims")


def test_the_course_page_includes_the_page_the_build_writes():
    text = (ROOT / "book" / "course.md").read_text()
    included = re.findall(r"```\{include\}\s*(\S+)", text)
    assert [Path("book") / i for i in included] == [TIMES_PAGE]
    assert not re.search(r"\| \d+ \| [A-Z].*\| [\d,–]+ \|", text)  # no table of seconds left in the page itself


def test_sessions_add_up_what_ran_and_the_sentence_names_the_heaviest_weeks():
    seconds = {c: 10.0 for _, _, cs in WEEKS for c in cs}
    cpu = dict(seconds)
    seconds["05_reward_model"], cpu["05_reward_model"] = 900.0, 1200.0
    cpu["04_annotators"] = 600.0
    del seconds["13_kto"], cpu["13_kto"]  # never ran here
    rows = {r["week"]: r for r in sessions(seconds, cpu)}
    assert rows[3]["total"] == 900 + 4 * 10 and rows[3]["total_cpu"] == 1200 + 4 * 10
    assert rows[4]["total"] == 30 and rows[4]["seconds"]["13_kto"] is None
    page = times_page(seconds, cpu, "tiny", where="a test CPU, 2 cores")
    assert "| 3 | Reward models and methods without RL | 5: 900 (1,200), 6: 10 (10)" in page
    assert "13: – (–)" in page
    assert "profile `tiny`, built on a test CPU, 2 cores" in page
    total = sum(cpu.values())
    assert f"Weeks 3 and 2 hold {(1240 + 600) / total:.0%} of the work" in page


def test_nothing_recorded_gives_dashes_and_no_heaviest_weeks(tmp_path):
    path = write_times_page(tmp_path, {}, {}, "micro")
    page = path.read_text()
    assert path == tmp_path / TIMES_PAGE
    assert page.count("| – (–) |") == len(WEEKS) and "Weeks" not in page  # every session's total
