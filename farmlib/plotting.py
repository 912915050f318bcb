"""The book's figures: one theme for every chapter, and point labels that do not sit on one another.

The book's text column is about 7.5 inches wide (752 px at 100 dpi), and many figures are drawn wider (two or three
panels side by side, up to 11 inches), so the browser shrinks them to the column and their text with them: a
label drawn at 8 points reads at 5 to 6. :func:`theme` draws every figure's text larger than seaborn's notebook
default, and a label's size is given relative to it (``"small"``, ``"x-small"``), never in points, so that it
scales with the theme. :func:`label_points` names the points of a scatter plot, moving each name until it
clears the names already placed and every point's dot: the methods of a leaderboard bunch within a few points of
each other, and names written at their points overlap into an unreadable block.
"""

from __future__ import annotations

#: How much larger than seaborn's notebook context the book draws its text: a figure 11 inches wide, shrunk to the
#: text column, then shows its tick labels at about the size seaborn gives a figure the column's own width.
FONT_SCALE = 1.3


def theme() -> None:
    """The book's look: seaborn's white grid with text :data:`FONT_SCALE` times the notebook size, and tables that
    show their texts whole (pandas cuts a cell at 50 characters by default, which cut an answer the reader was meant
    to read, or the item an instruction asks about: "Classify this item as an animal, a tool, or a ...")."""
    import pandas as pd
    import seaborn as sns

    sns.set_theme(style="whitegrid", font_scale=FONT_SCALE)
    pd.set_option("display.max_colwidth", None)


def _overlap(a, b, pad: float) -> bool:
    return a.x0 < b.x1 + pad and b.x0 < a.x1 + pad and a.y0 < b.y1 + pad and b.y0 < a.y1 + pad


def _clear(box, placed, pad: float, sign: int) -> float:
    """How far (pixels, in the direction ``sign``: 1 up, -1 down) ``box`` must move to clear every box in ``placed``.
    Each step moves past every box it hits, and a hundredth of a pixel more: a move computed to end exactly at
    ``pad`` can round to a hair inside it, and the same step would then repeat for ever. Moving one way, a box is
    passed at most once, so ``len(placed)`` steps always suffice."""
    shift = 0.0
    for _ in range(len(placed) + 1):
        hit = [p for p in placed if _overlap(box.translated(0, shift), p, pad)]
        if not hit:
            return shift
        shift = (max(p.y1 for p in hit) + pad + 0.01 - box.y0) if sign > 0 else (min(p.y0 for p in hit) - pad - 0.01 - box.y1)
    raise AssertionError("a label kept hitting the boxes it had passed")  # cannot happen: each box is passed once


def label_points(ax, xs, ys, labels, fontsize="small", offset: tuple[float, float] = (4, 2),
                 pad: float = 3.0, marker: float = 3.0, avoid=(), keep_clear=()) -> list:
    """Write ``labels[i]`` beside the point ``(xs[i], ys[i])`` of ``ax``, ``offset`` points to its upper right or
    upper left. From the lowest point up, each label takes the side and the vertical move (up or down, from nothing)
    that clears every label already placed and every point's dot (a square ``marker`` points from its centre) by
    ``pad`` pixels with the least move, sticking out of the axes as little as it can (the right side first, at equal moves).
    ``avoid``: more points ``(x, y)`` whose dots no label may cover (another series drawn on the same axes).
    ``keep_clear``: artists already drawn (a note, a legend) that no label may cover.
    A label moved from its point gets a thin line back to it.
    Deterministic: the same points give the same layout. Call it once the axes' limits and the figure's layout are
    final. Returns the text objects, in the order of ``labels``."""
    from matplotlib.transforms import Bbox

    fig = ax.figure
    points = list(zip(xs, ys, map(str, labels)))

    def write(x, y, label, left=False, shift_pt=0.0):
        line = dict(arrowstyle="-", lw=0.5, color="gray", shrinkA=0, shrinkB=2) if shift_pt else None
        return ax.annotate(label, (x, y), xytext=(-offset[0] if left else offset[0], offset[1] + shift_pt),
                           textcoords="offset points", fontsize=fontsize, va="bottom",
                           ha="right" if left else "left", arrowprops=line)

    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    boxes = []  # per point: its label's box on the right and on the left
    for p in points:
        sides = []
        for left in (False, True):
            t = write(*p, left=left)
            sides.append(t.get_window_extent(renderer))
            t.remove()
        boxes.append(sides)

    def outside(b):  # pixels the box sticks out of the axes, all four sides together
        return (max(0.0, frame.x0 - b.x0) + max(0.0, b.x1 - frame.x1) + max(0.0, frame.y0 - b.y0)
                + max(0.0, b.y1 - frame.y1))

    r = marker * fig.dpi / 72.0
    dots = [Bbox.from_extents(u - r, v - r, u + r, v + r) for u, v in ax.transData.transform([p[:2] for p in points] + list(avoid))]
    choice = [(False, 0.0)] * len(points)
    placed = (list(dots) if marker else []) + [a.get_window_extent(renderer) for a in keep_clear]
    for i in sorted(range(len(points)), key=lambda i: (points[i][1], points[i][0], points[i][2])):
        best = None
        others = [b for b in placed if not (marker and b is dots[i])]  # its own dot: the offset keeps the label beside it
        for left in (False, True):
            box = boxes[i][left]
            for d in (_clear(box, others, pad, 1), _clear(box, others, pad, -1)):
                rank = (round(outside(box.translated(0, d))), abs(d), left)
                if best is None or rank < best[0]:
                    best = (rank, left, d)
        _, left, d = best
        choice[i] = (left, d)
        placed.append(boxes[i][left].translated(0, d))
    return [write(*p, left=left, shift_pt=d * 72.0 / fig.dpi) for p, (left, d) in zip(points, choice)]


def zoomed_scatter(ax, rows, x: str, y: str, xerr: str, yerr: str, xlabel: str, ylabel: str, title: str = "",
                   far: float = 10.0, group: str | None = None, group_labels: dict | None = None,
                   name: str = "method", short: tuple[str, str] = ("x", "y")) -> list[str]:
    """Two win-rates of the same rows against each other (columns ``x`` and ``y`` of ``rows``, standard errors
    ``xerr`` and ``yerr``), a point per row with its error bars, the line where the two are equal, and each point
    named (column ``name``); with ``group``, one colour per value of that column, named in the legend by
    ``group_labels``. Methods sit within a few points of one another while a baseline sits twenty below or an
    expert thirty above: drawn to one scale, the methods' names crowd into a corner and their order, which is
    what the figure is for, cannot be read. So the axes hold the rows within ``far`` points of the median row on
    both axes (all of them when fewer than three are), to the same scale on both, and a note in the corner gives
    each row left off with its two win-rates (``short``: the two axes' names there). Returns the rows left off."""
    xv, yv = rows[x], rows[y]
    near = ((xv - xv.median()).abs() <= far) & ((yv - yv.median()).abs() <= far)
    if near.sum() < 3:
        near[:] = True
    shown, left_off = rows[near], rows[~near]
    xs, ys, xe, ye = shown[x], shown[y], shown[xerr], shown[yerr]
    lo = min((xs - xe).min(), (ys - ye).min()) - 1
    hi = max((xs + xe).max(), (ys + ye).max()) + 1
    for key, g in (shown.groupby(group, sort=False) if group else [(None, shown)]):
        ax.errorbar(g[x], g[y], xerr=g[xerr], yerr=g[yerr], fmt="o", capsize=2,
                    label=None if key is None else (group_labels or {}).get(key, str(key)))
    ax.plot([lo, hi], [lo, hi], ":", color="gray")
    ax.set(xlim=(lo, hi), ylim=(lo, hi), aspect="equal", title=title, xlabel=xlabel, ylabel=ylabel)
    clear = []
    if group:
        clear.append(ax.legend(loc="upper left", fontsize="small"))
    if len(left_off):
        clear.append(ax.text(0.98, 0.02, f"off the plot ({short[0]}, {short[1]}):\n" + "\n".join(
            f"{r[name]} ({r[x]:.1f} %, {r[y]:.1f} %)" for _, r in left_off.iterrows()),
            transform=ax.transAxes, ha="right", va="bottom", fontsize="x-small"))
    ax.figure.tight_layout()
    label_points(ax, xs, ys, shown[name], keep_clear=clear)
    return left_off[name].tolist()
