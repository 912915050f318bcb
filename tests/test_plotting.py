"""The book's figure helpers: point labels that clear one another."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.text import Text  # noqa: E402
from matplotlib.transforms import Bbox  # noqa: E402

from farmlib import plotting  # noqa: E402

# a leaderboard's methods under people and judges: nine within three points of one another
XS = [25.0, 25.2, 25.5, 26.0, 28.0, 28.2, 28.5, 28.5, 32.8, 34.8, 8.8]
YS = [28.5, 25.2, 25.8, 30.5, 29.0, 27.5, 27.0, 30.0, 35.8, 34.2, 5.2]
NAMES = ["sft10k", "feedme", "rc", "sft52k", "dpo", "ppo", "quark", "kto", "best_of_n", "expert_iteration", "base"]


def _layout():
    plotting.theme()
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.scatter(XS, YS)
    fig.tight_layout()
    texts = plotting.label_points(ax, XS, YS, NAMES)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    boxes = [Text.get_window_extent(t, renderer) for t in texts]  # the text alone, not its leader line
    plt.close(fig)
    return texts, boxes


def test_point_labels_clear_one_another_and_keep_their_points():
    texts, boxes = _layout()
    assert [t.get_text() for t in texts] == NAMES
    assert [t.xy for t in texts] == list(zip(XS, YS))  # each label still points at its own point
    crossing = [(NAMES[i], NAMES[j]) for i in range(len(boxes)) for j in range(i) if boxes[i].overlaps(boxes[j])]
    assert not crossing, crossing
    assert texts[NAMES.index("base")].arrow_patch is None  # a label alone stays where it was written


def test_point_labels_leave_every_dot_visible():
    plotting.theme()
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.scatter(XS, YS)
    fig.tight_layout()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    r = 3.0 * fig.dpi / 72  # the helper's default dot: 3 points from the centre
    dots = [Bbox.from_extents(u - r, v - r, u + r, v + r) for u, v in ax.transData.transform(list(zip(XS, YS)))]
    naive = [ax.annotate(n, (x, y), xytext=(4, 2), textcoords="offset points", fontsize="small")
             for n, x, y in zip(NAMES, XS, YS)]
    fig.canvas.draw()
    assert any(t.get_window_extent(renderer).overlaps(d) for t in naive for d in dots)  # written in place, some cover a dot
    for t in naive:
        t.remove()
    texts = plotting.label_points(ax, XS, YS, NAMES)
    fig.canvas.draw()
    covered = [(t.get_text(), i) for t in texts for i, d in enumerate(dots) if Text.get_window_extent(t, renderer).overlaps(d)]
    plt.close(fig)
    assert not covered, covered


def test_labels_of_points_that_coincide_are_stacked_with_lines_back_to_them():
    fig, ax = plt.subplots(figsize=(5, 4))
    xs, ys = [1.0, 1.0, 1.0, 1.01, 2.0], [1.0, 1.0, 1.0, 1.01, 2.0]
    ax.set(xlim=(0, 3), ylim=(0, 3))
    naive = [ax.annotate(n, (x, y), xytext=(4, 2), textcoords="offset points") for n, x, y in zip("abcde", xs, ys)]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    assert naive[0].get_window_extent(renderer).overlaps(naive[1].get_window_extent(renderer))  # written in place
    for t in naive:
        t.remove()
    texts = plotting.label_points(ax, xs, ys, list("abcde"))
    fig.canvas.draw()
    boxes = [Text.get_window_extent(t, renderer) for t in texts]
    plt.close(fig)
    assert not [(i, j) for i in range(5) for j in range(i) if boxes[i].overlaps(boxes[j])]
    assert sum(t.arrow_patch is not None for t in texts[:4]) >= 2  # moved from their points, with a line back
    assert texts[4].arrow_patch is None


def test_point_labels_are_laid_out_the_same_every_time():
    first = [(round(b.x0, 3), round(b.y0, 3)) for b in _layout()[1]]
    assert first == [(round(b.x0, 3), round(b.y0, 3)) for b in _layout()[1]]


def test_a_label_that_would_leave_the_axes_on_the_right_is_written_to_the_left_of_its_point():
    texts, _ = _layout()
    assert texts[NAMES.index("expert_iteration")].get_horizontalalignment() == "right"
    assert texts[NAMES.index("base")].get_horizontalalignment() == "left"


def test_a_label_in_the_top_right_corner_is_written_to_the_left_of_its_point():
    # neither side keeps it inside the axes (it sticks out at the top either way): the side that sticks out less wins
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.set(xlim=(0, 10), ylim=(0, 10))
    (text,) = plotting.label_points(ax, [9.8], [9.9], ["expert"])
    plt.close(fig)
    assert text.get_horizontalalignment() == "right"


def test_a_move_that_rounds_to_a_hair_inside_the_pad_still_ends():
    # 1.1 + (2.3 + 3.0 - 1.1) is 4.299999999999999 in floating point, a hair below 2.3 + 3.0: a move computed to end
    # exactly at the pad would be found overlapping again, and repeat for ever
    box, below = Bbox.from_extents(0, 1.1, 10, 5), Bbox.from_extents(0, -5, 10, 2.3)
    shift = plotting._clear(box, [below], pad=3.0, sign=1)
    assert 4.2 < shift < 4.22 and not plotting._overlap(box.translated(0, shift), below, 3.0)


def test_the_books_tables_show_a_text_whole():
    """A chapter's table of answers shows each answer whole, not its first 50 characters."""
    import pandas as pd

    answer = "Here is a more formal version: " + " ".join(f"word{i}" for i in range(40))
    with pd.option_context("display.max_colwidth", 50):
        plotting.theme()
        assert answer in pd.DataFrame({"answer": [answer]})._repr_html_()


def test_a_label_keeps_clear_of_a_note_on_the_axes():
    plotting.theme()
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.scatter(XS, YS)
    fig.tight_layout()
    # a note written where dpo's and kto's names would go
    note = ax.text(28.3, 29.3, "a note\nthe labels must not cover", fontsize="x-small")
    texts = plotting.label_points(ax, XS, YS, NAMES, keep_clear=[note])
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = note.get_window_extent(renderer)
    covering = [t.get_text() for t in texts if Text.get_window_extent(t, renderer).overlaps(box)]
    plt.close(fig)
    assert not covering, covering


def test_the_simulator_figure_leaves_a_far_baseline_off_its_axes_and_names_it():
    import pandas as pd

    from farmlib.evaluation.leaderboard import sim_vs_people

    rows = pd.DataFrame({"method": NAMES, "win_rate_human": XS, "win_rate_p_sim_eval": YS,
                         "se_human": [2.2] * len(XS), "se_p_sim_eval": [2.2] * len(XS)})
    plotting.theme()
    fig, ax = plt.subplots(figsize=(7, 6))
    off = sim_vs_people(ax, rows)
    lo, hi = ax.get_xlim()
    notes = [t.get_text() for t in ax.texts]
    plt.close(fig)
    assert off == ["base"]
    assert lo > 8.8 and lo < 25.0 - 2.2 and hi > 34.8 + 2.2 and ax.get_ylim() == (lo, hi)  # the rest, error bars and all
    assert any("base (8.8 %, 5.2 %)" in t for t in notes)
    fig, ax = plt.subplots()
    assert sim_vs_people(ax, rows[rows["method"] != "base"]) == []  # nothing far: nothing left off
    plt.close(fig)


def test_a_zoomed_scatter_in_groups_names_them_and_leaves_far_rows_on_both_sides_off():
    import pandas as pd

    rows = pd.DataFrame({"method": NAMES + ["expert"], "sim": YS + [69.0], "people": XS + [68.5],
                         "sim_se": [2.2] * 12, "people_se": [2.2] * 12,
                         "feedback": [n not in ("sft10k", "sft52k", "base", "expert") for n in NAMES + ["expert"]]})
    plotting.theme()
    fig, ax = plt.subplots(figsize=(7, 6))
    off = plotting.zoomed_scatter(ax, rows, "sim", "people", "sim_se", "people_se", "simulation (%)", "people (%)",
                                  group="feedback", group_labels={True: "learns", False: "baseline"},
                                  short=("simulation", "people"))
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    notes = [t.get_text() for t in ax.texts]
    lo, hi = ax.get_xlim()
    plt.close(fig)
    assert off == ["base", "expert"] and sorted(legend) == ["baseline", "learns"]
    assert any("off the plot (simulation, people):" in t and "expert (69.0 %, 68.5 %)" in t for t in notes)
    assert 8.8 < lo and hi < 68.5 and ax.get_ylim() == (lo, hi)
