"""How the book shows a table: cells padded less than the theme's default, so that a table of eight or nine
numeric columns fits the 720-px content column (``benchmarks/screenshots.py`` measures it)."""

from __future__ import annotations

#: CSS for a Styler's own table (its id outranks the theme's table rules)
COMPACT = [{"selector": "th, td", "props": [("padding", "0.15em 0.35em")]}]


def compact(styler):
    """The Styler with compact cell padding."""
    return styler.set_table_styles(COMPACT, overwrite=False)
