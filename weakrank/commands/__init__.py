"""Sub-commands of the ``weakrank`` CLI: each module here has ``register(add)``.

``add(name, func, help)`` creates a sub-command that takes a pipeline config, ``--run-dir`` and
``--quiet``; the module adds its own options to the returned parser. New modules are found
automatically, so a feature's CLI lives beside nothing else's.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from weakrank.config import PipelineConfig, check_max_queries, load_config

AddCommand = Callable[[str, Callable[[argparse.Namespace], None], str], argparse.ArgumentParser]


def pipeline_config(args: argparse.Namespace) -> PipelineConfig:
    """The config named on the command line, with ``--run-dir`` / ``--max-queries`` applied."""
    cfg = load_config(args.config)
    if args.run_dir:
        cfg = replace(cfg, run_dir=Path(args.run_dir))
    if getattr(args, "max_queries", None) is not None:
        max_queries = check_max_queries(args.max_queries, "--max-queries")
        cfg = replace(cfg, dataset=replace(cfg.dataset, max_queries=max_queries))
    return cfg
