"""``weakrank select``: draw the queries and passages a person judges (a sample that stands for the pool), into a
judging file."""

from __future__ import annotations

import argparse

from weakrank.commands import AddCommand, pipeline_config, whole_number


def cmd_select(args: argparse.Namespace) -> None:
    from weakrank import pipeline

    cfg = pipeline_config(args)
    path, pairs = pipeline.select(cfg, queries=args.queries, split=args.split, per_query=args.per_query,
                                  seed=args.seed, output=args.output, more=args.more, force=args.force)
    queries = pairs["query_id"].nunique()
    print(f"{'added' if args.more else 'drew'} {queries} quer{'y' if queries == 1 else 'ies'} of split "
          f"{args.split!r}, a random sample that stands for its queries (each one's probability of being drawn is in "
          f"the file): {len(pairs)} passages to read ({len(pairs) / max(queries, 1):.1f} a query) → {path}")
    print(f"next: weakrank judge {path}   (or fill in its relevance column: 1 relevant, 0 not)\n"
          f"then: weakrank run {args.config} --judgments {path}")


def register(add: AddCommand) -> None:
    p = add("select", cmd_select, "draw a random sample of queries (and their passages) that stands for the pool, "
            "into a judging file for `weakrank judge`; reads no gold")
    p.add_argument("--queries", type=int, default=10, help="how many queries to judge (default 10)")
    p.add_argument("--split", default="train", help="the pool of unjudged queries (default train; never the "
                   "[evaluate] split)")
    p.add_argument("--per-query", type=int, default=6, help="passages asked about per query (default 6)")
    p.add_argument("--seed", type=whole_number, default=0, help="another seed, another sample (a whole number >= 0; "
                   "--more reads the file's)")
    p.add_argument("--output", help="the judging file (default <run_dir>/judging.tsv)")
    p.add_argument("--force", action="store_true", help="replace --output even if weakrank did not write it or it "
                   "changed since (a person's skips and notes are lost)")
    p.add_argument("--more", action="store_true", help="add --queries more queries to the judging file, keeping "
                   "its rows and judgments: the same sample, grown (when too few judged queries had a relevant passage)")
