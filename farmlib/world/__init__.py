"""FarmWorld: a generated instruction world with a known true reward R* (``farmworld``), and its
splits in the Alpaca schema (``splits``)."""

from farmlib.world.families import Family
from farmlib.world.farmworld import (
    ANIMALS,
    ATTRIBUTES,
    DEMONSTRATOR,
    EXPERT,
    FAMILIES,
    LISTABLE,
    REFERENCE,
    REWARD_WEIGHTS,
    TOOLS,
    FarmWorld,
    Task,
    Writer,
    format_prompt,
    is_list,
    words,
)
from farmlib.world.splits import make_splits

__all__ = ["ANIMALS", "ATTRIBUTES", "DEMONSTRATOR", "EXPERT", "FAMILIES", "Family", "LISTABLE", "REFERENCE", "REWARD_WEIGHTS",
           "TOOLS", "FarmWorld", "Task", "Writer", "format_prompt", "is_list", "make_splits", "words"]
