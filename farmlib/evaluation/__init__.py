"""Evaluation: win-rate against a reference (``win_rate``, also for AlpacaEval annotation files) and
the leaderboard of methods (``leaderboard``)."""

from farmlib.evaluation.win_rate import WinRate, leaderboard_from_files, preference_from_scores, win_rate

__all__ = ["WinRate", "leaderboard_from_files", "preference_from_scores", "win_rate"]
