"""Evaluation: win-rate against a reference (``win_rate``, also for AlpacaEval annotation files), the
length-controlled win-rate (``length_controlled_win_rate``) and the leaderboard of methods (``leaderboard``)."""

from farmlib.evaluation.length_controlled import LengthControlled, length_controlled_win_rate
from farmlib.evaluation.win_rate import WinRate, leaderboard_from_files, preference_from_scores, win_rate

__all__ = ["LengthControlled", "WinRate", "leaderboard_from_files", "length_controlled_win_rate",
           "preference_from_scores", "win_rate"]
