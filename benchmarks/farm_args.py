"""The arguments every FarmWorld benchmark takes to choose its farm: ``--profile`` and ``--world-seed``."""

from __future__ import annotations

import argparse

from farmlib import Farm


def add_farm_args(ap: argparse.ArgumentParser) -> None:
    """``--profile`` (a built-in profile or a ``.toml`` file) and ``--world-seed`` (over the profile's)."""
    ap.add_argument("--profile", default="tiny")
    ap.add_argument("--world-seed", type=int, default=None, help="over the profile's (default: the profile's own)")


def farm_from_args(args: argparse.Namespace) -> Farm:
    """The farm of ``--profile``, with its world seed replaced where ``--world-seed`` is given."""
    return Farm(args.profile, **({} if args.world_seed is None else {"world_seed": args.world_seed}))
