"""``weakrank select CONFIG``: draw the queries and passages a person judges (a sample that stands for the pool)
into a judging file (the select stage, :mod:`weakrank.stages.select`), for ``weakrank judge``
(:mod:`weakrank.commands.judge`)."""

from __future__ import annotations

import argparse

from weakrank.commands import AddCommand, pipeline_config, repeated_flags, whole_number
from weakrank.errors import ConfigError
from weakrank.judged import EVALUATION_DESIGNS
from weakrank.paths import program, shell_path


def cmd_select(args: argparse.Namespace) -> None:
    from weakrank import pipeline
    from weakrank.judged.pooling import RANK, row_name, systems_of
    from weakrank.judged.report import EVALUATION_QUERIES, JUDGE_QUERIES

    cfg = pipeline_config(args)
    again = " ".join(filter(None, [shell_path(args.config), repeated_flags(args)]))
    if args.evaluation:
        if args.split:
            raise ConfigError("--evaluation draws from the evaluated split ([evaluate] split): no --split")
        path, pairs = pipeline.select_evaluation(cfg, queries=EVALUATION_QUERIES if args.queries is None else args.queries,
                                                 per_query=args.per_query, seed=args.seed, output=args.output,
                                                 force=args.force, design=args.design, against=args.against or (),
                                                 more=args.more)
        split, then, why = cfg.evaluate.split, "evaluate", "to measure the systems on it, never to train"
        if any(column.startswith(RANK) for column in pairs.columns):  # pooled: against its baseline
            compared, baseline = systems_of(pairs)[1:], row_name(systems_of(pairs)[0])
            why = f"to measure {', '.join(compared)} on it against {baseline}, never to train"
    else:
        if args.against or args.design != EVALUATION_DESIGNS[0]:
            raise ConfigError("--against and --design choose how an evaluation sample is drawn: with --evaluation")
        path, pairs = pipeline.select(cfg, queries=JUDGE_QUERIES if args.queries is None else args.queries, split=args.split or "train",
                                      per_query=args.per_query, seed=args.seed, output=args.output, more=args.more,
                                      force=args.force)
        split, then, why = args.split or "train", "run", "to move the LFs' quality priors and teach the ranker"
    queries = pairs["query_id"].nunique()
    print(f"{'added' if args.more else 'drew'} {queries} quer{'y' if queries == 1 else 'ies'} of split "
          f"{split!r}, a random sample that stands for its queries (each one's probability of being drawn is in "
          f"the file), {why}: {len(pairs)} passages to read ({len(pairs) / max(queries, 1):.1f} a query) → {path}")
    print(f"next: {program()} judge {shell_path(path)}   (or fill in its relevance column: 1 relevant, 0 not)\n"
          f"then: {program()} {then} {again} --judgments {shell_path(path)}")


def register(add: AddCommand) -> None:
    """Add ``select``."""
    p = add("select", cmd_select, "draw a random sample of queries (and their passages) that stands for the pool, "
            "into a judging file for `weakrank judge`; reads no gold")
    p.add_argument("--queries", type=int, help="how many queries to judge (default 10; with --evaluation 20)")
    p.add_argument("--split", help="the pool of unjudged queries (default train; never the [evaluate] split)")
    p.add_argument("--evaluation", action="store_true", help="instead, a random sample of the evaluated split "
                   "([evaluate] split) to measure the systems without qrels, into "
                   "<config stem>.judgments/evaluation-judging.tsv: judge it, then weakrank evaluate CONFIG "
                   "--judgments FILE (its judgments never train)")
    p.add_argument("--design", choices=EVALUATION_DESIGNS, default=EVALUATION_DESIGNS[0], help="with --evaluation: pooled "
                   "(default) judges the union of the top k of the first stage and the systems compared, where they differ, and "
                   "measures P@k, RR@k and nDCG@k exactly there; today judges the top of the candidates' lists and "
                   "passages drawn from their rest (MAP only)")
    p.add_argument("--against", action="append", metavar="SYSTEM", help="with --evaluation: a system to compare "
                   "with the first stage (an LF, a fusion, the labels: a row of evaluate's table; repeatable; default the trained "
                   "ranker)")
    p.add_argument("--per-query", type=int, default=6, help="passages asked about per query (default 6)")
    p.add_argument("--seed", type=whole_number, default=0, help="another seed, another sample (a whole number >= 0; "
                   "--more reads the file's)")
    p.add_argument("--output", help="the judging file (default <config stem>.judgments/judging.tsv, beside the "
                   "config: deleting a run leaves it)")
    p.add_argument("--force", action="store_true", help="replace --output even if weakrank did not write it or it "
                   "changed since (a person's skips and notes are lost)")
    p.add_argument("--more", action="store_true", help="add --queries more queries to the judging file, keeping "
                   "its rows and judgments: the same sample, grown (when too few judged queries had a relevant passage; with "
                   "--evaluation, a pooled sample whose answer is not settled yet)")
