"""farmlib: AlpacaFarm as a small, readable library (world, data, models, evaluation).

Names are imported on first use, so ``farm --help`` or a bad argument answers at once instead of
after torch and transformers load.
"""

from __future__ import annotations

import importlib
import os
import warnings

# MKL reads it at its first product, which may come before farmlib.seeding is imported (farmlib.seeding says why)
os.environ.setdefault("MKL_CBWR", "AUTO,STRICT")

# Chapters run in a kernel without ipywidgets, where importing ``tqdm.auto`` warns "IProgress not found"
# into the rendered page. Our bars go to farm's status line (farmlib.progress); the warning is noise.
warnings.filterwarnings("ignore", message="IProgress not found", module="tqdm")

_WHERE = {
    "Farm": "farmlib.pipeline",
    "PROFILES": "farmlib.profiles", "Profile": "farmlib.profiles", "get_profile": "farmlib.profiles",
    "WinRate": "farmlib.evaluation.win_rate", "win_rate": "farmlib.evaluation.win_rate",
    "leaderboard_from_files": "farmlib.evaluation.win_rate",
    "leaderboard_of_methods": "farmlib.evaluation.leaderboard",
    "length_controlled_win_rate": "farmlib.evaluation.length_controlled",
    "FarmWorld": "farmlib.world", "Writer": "farmlib.world", "DEMONSTRATOR": "farmlib.world",
    "REFERENCE": "farmlib.world", "EXPERT": "farmlib.world", "format_prompt": "farmlib.world",
}

__all__ = sorted(_WHERE)
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in _WHERE:
        module = importlib.import_module(_WHERE[name])
        for n, m in _WHERE.items():  # bind them all: importing farmlib.evaluation.win_rate rebinds farmlib.evaluation.win_rate
            if m == _WHERE[name]:
                globals()[n] = getattr(module, n)
        return globals()[name]
    raise AttributeError(f"module 'farmlib' has no attribute {name!r}")
