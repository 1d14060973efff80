"""The few-shot rule's constants: how often each variant of ``few_shot.choose`` gains or loses, on every collection.

For each rule (least judged queries with a relevant passage × least mean AP lead × margin in standard errors) and
each collection, the judged queries of ``bench_judgments.py`` (``select``'s N and ``--draws`` random sets of N, the
same sets and reading budget, the person simulated by the train split's gold) choose a combination of the LFs, and
its test MAP as a teacher is compared with the label-free weighting's. No training: the candidates' test MAPs are
computed once. The rule shipped is the one marked in the table; docs/experiments.md says why it was chosen.

Writes ``benchmarks/few_shot_rule.csv`` (a row per rule, collection and N: select's gain, the random sets' mean
gain, their share more than 0.005 below the label-free teacher); ``--markdown`` prints a row per rule.

Run: ``python benchmarks/bench_few_shot_rule.py`` (collections whose votes.parquet exists)
"""

from __future__ import annotations

import argparse
import itertools

import numpy as np
import pandas as pd
from bench_judgments import judged_set_options, judged_sets
from bench_quality import EVAL_SPLIT, REQUIRE, ROOT

from weakrank.config import load_config
from weakrank.evaluation.metrics import evaluate_run
from weakrank.evaluation.tables import to_markdown
from weakrank.io import read_parquet, write_text
from weakrank.label_models import few_shot
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.labeling import lf_names, score_matrix
from weakrank.lists import informative_rows, standardize_within
from weakrank.paths import RunPaths

MIN_QUERIES = (3, 4, 5, 6)
MIN_LEADS = (0.02, 0.05, 0.1)
MARGINS = (1.0, 1.5, 2.0)
LOSS = 0.005  # a draw this far below the label-free teacher counts as a loss


def candidate_sets(name: str, sizes: list[int], draws: int, per_query: int) -> tuple[dict[str, float], list]:
    """Each candidate combination's test MAP as a teacher, and ``(n, method, aps)`` for select's set and the random
    sets of each size (``aps``: :func:`few_shot.candidate_aps` on their judged queries)."""
    cfg = load_config(ROOT / "pipelines" / f"{name}.toml")
    paths = RunPaths(cfg.run_dir)
    votes = read_parquet(paths.votes)
    qrels = read_parquet(paths.dataset / "qrels.parquet")
    texts = read_parquet(paths.dataset / "queries.parquet").set_index("query_id")["text"].to_dict()
    options = cfg.aggregate.options_for("fusion")
    scores, groups, names = score_matrix(votes), votes["query_id"].to_numpy(), lf_names(votes)
    model = ScoreFusionModel(**options).fit(scores, groups, names=names)
    z, informative = standardize_within(scores, groups), informative_rows(scores, groups)
    found = few_shot.candidates(model.lf_weights(scores.shape[1]), informative.any(axis=0), names)
    evaluated = (votes["split"] == EVAL_SPLIT[name]).to_numpy()

    def test_map(s: np.ndarray) -> float:
        run = votes.loc[evaluated, ["query_id", "passage_id"]].assign(score=s)
        return float(evaluate_run(run, qrels, require=REQUIRE[name], rn=())["MAP"].mean())

    test = {c: test_map(few_shot.combined(z[evaluated], groups[evaluated], informative[evaluated], combination))
            for c, combination in found.items() if c != few_shot.LABEL_FREE}
    test[few_shot.LABEL_FREE] = test_map(model.fused(scores[evaluated], groups[evaluated]))
    sets = []
    for n, method, _, _, gold in judged_sets(votes, texts, options, name, sizes, draws, per_query):
        rows = pd.Series(groups).isin(set(groups[np.isfinite(gold)])).to_numpy()  # as choose_combination reads
        sets.append((n, method, few_shot.candidate_aps(z[rows], groups[rows], informative[rows], gold[rows], found)))
    return test, sets


def sweep(name: str, test: dict[str, float], sets: list) -> list[dict]:
    """A row per rule and N: the teacher's test MAP gain over the label-free one for select's set and the random
    sets."""
    rows = []
    for min_queries, min_lead, margin in itertools.product(MIN_QUERIES, MIN_LEADS, MARGINS):
        gains: dict[tuple[int, str], list[float]] = {}
        for n, method, aps in sets:
            choice = few_shot.choose(aps, margin, min_lead=min_lead, min_queries=min_queries).name
            gains.setdefault((n, method), []).append(test[choice] - test[few_shot.LABEL_FREE])
        for n in sorted({n for n, _ in gains}):
            draws = np.array(gains.get((n, "random"), [np.nan]))
            rows.append({"dataset": name, "min_queries": min_queries, "min_lead": min_lead, "margin": margin, "n": n,
                         "select_gain": gains[(n, "select")][0], "random_mean_gain": float(np.nanmean(draws)),
                         "random_losses": float(np.mean(draws < -LOSS))})
    return rows


def markdown(table: pd.DataFrame) -> str:
    """A row per rule: select's worst gain over every collection and N, its gain at N = 10 per collection, and the
    random sets' share of losses over every collection and N (the shipped rule marked)."""
    rule = ["min_queries", "min_lead", "margin"]
    out = table.groupby(rule).agg(select_worst=("select_gain", "min"), random_losses=("random_losses", "mean"),
                                  random_mean_gain=("random_mean_gain", "mean"))
    at_10 = table[table["n"] == 10].pivot_table(index=rule, columns="dataset", values="select_gain")
    out = out.join(at_10.add_prefix("select 10: ")).reset_index()
    shipped = ((out["min_queries"] == few_shot.MIN_QUERIES) & (out["min_lead"] == few_shot.MIN_LEAD)
               & (out["margin"] == few_shot.MARGIN))
    out.insert(0, "shipped", np.where(shipped, "◀", ""))
    return to_markdown(out.set_index("shipped"), ".4f")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    judged_set_options(parser)
    parser.add_argument("--markdown", action="store_true", help="only print few_shot_rule.csv as a table")
    args = parser.parse_args()
    csv = ROOT / "benchmarks" / "few_shot_rule.csv"
    if args.markdown:
        print(markdown(pd.read_csv(csv)))
        return
    rows = []
    for name in args.datasets:
        if not RunPaths(load_config(ROOT / "pipelines" / f"{name}.toml").run_dir).votes.exists():
            print(f"{name}: no votes.parquet (weakrank run pipelines/{name}.toml --stages ingest,label,aggregate)")
            continue
        rows += sweep(name, *candidate_sets(name, args.sizes, args.draws, args.per_query))
        print(f"{name}: done", flush=True)
    table = pd.DataFrame(rows)
    write_text(table.to_csv(index=False, float_format="%.4f"), csv)
    print(markdown(table))


if __name__ == "__main__":
    main()
