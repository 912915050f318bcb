"""farmlib: AlpacaFarm as a small, readable library (world, data, models, evaluation)."""

from farmlib.pipeline import Farm
from farmlib.profiles import PROFILES, Profile, get_profile
from farmlib.win_rate import WinRate, leaderboard, win_rate
from farmlib.world import DEMONSTRATOR, EXPERT, REFERENCE, FarmWorld, Writer, format_prompt

__all__ = ["Farm", "FarmWorld", "Writer", "DEMONSTRATOR", "REFERENCE", "EXPERT", "PROFILES",
           "Profile", "get_profile", "WinRate", "leaderboard", "win_rate", "format_prompt"]
__version__ = "0.1.0"
