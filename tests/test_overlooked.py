"""The warning of an LF the labels leave out against the evidence: weighted near zero by the fusion label model while
its first candidate differs from the fused ranking's on most lists, and either it leads the judged sample (a sample
once ranked best the LF that had 1.5 % of the teacher's weight, and nothing said so) or agreement alone makes it the
best witness and its prior overrode that. Where the evidence is not against the weighting it says nothing (the rule of
weight and disagreement alone fired on every collection, so it meant nothing)."""

import numpy as np
import pandas as pd
import pytest
from test_analysis import score_votes, votes_table

from weakrank.analysis import fusion_views
from weakrank.cli import main
from weakrank.fusion_checks import overlooked
from weakrank.io import write_parquet
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.paths import RunPaths


def with_contrarian(votes: pd.DataFrame, seed: int = 1) -> pd.DataFrame:
    """``votes`` plus ``word_overlap``: a score of its own, shared with no other LF (the model weights it ~0)."""
    score = np.random.default_rng(seed).normal(size=len(votes))
    return votes.assign(score_word_overlap=score, vote_word_overlap=np.where(score > 1, 1, -1).astype(np.int8))


PRIORS = {"bm25": {"family": "lexical", "prior": 0.2}, "embedding_cosine": {"family": "semantic", "prior": 0.9},
          "bert_cosine": {"family": "semantic", "prior": 0.7}}


def overridden_votes(n_queries: int = 300, size: int = 8, seed: int = 0) -> pd.DataFrame:
    """Lists with one relevant candidate where the lexical LF is the best witness by far (agreement across the
    families says so) and the two semantic ones are weak and independent: a prior that trusts semantics is wrong."""
    rng = np.random.default_rng(seed)
    y = np.zeros(n_queries * size)
    y[np.arange(n_queries) * size + rng.integers(size, size=n_queries)] = 1
    lfs = {"bm25": 3 * y + 0.5 * rng.normal(size=len(y)), "embedding_cosine": y + 1.5 * rng.normal(size=len(y)),
           "bert_cosine": y + 1.5 * rng.normal(size=len(y))}
    return votes_table(lfs, n_queries, size)


def test_an_lf_its_prior_overrode_against_strong_agreement_is_named_with_the_option_that_helps():
    votes = overridden_votes()
    model = ScoreFusionModel(priors=PRIORS).fit_table(votes)
    line = overlooked(votes, model)
    assert line.startswith("bm25 has ") and "yet agreement alone loads it" in line and "its prior (0.20) decided" in line
    assert "`[label.options.bm25] prior = 0.95` (what agreement says) gives it " in line
    assert float(line.split("bm25 has ")[1].split("%")[0]) < 5
    gets = int(line.split("gives it ")[1].split("%")[0])
    changed = int(line.split("candidate on ")[1].split("%")[0])
    offered = {**PRIORS, "bm25": {"family": "lexical", "prior": 0.95}}
    assert ScoreFusionModel(priors=offered).fit_table(votes).fitted().lfs[0].weight == pytest.approx(gets / 100, abs=0.01)
    assert gets > 30 and changed > 20  # the option it names does give bm25 its weight


def test_no_warning_where_agreement_itself_leaves_an_lf_out_or_its_prior_only_keeps_it_low():
    agree = score_votes(relevance=3.0)  # bm25 weak; the semantic LFs agree on the relevant candidate
    assert overlooked(agree, ScoreFusionModel().fit_table(agree)) is None
    contrarian = with_contrarian(agree)  # word_overlap: noise, weighted ~0 by agreement itself
    model = ScoreFusionModel().fit_table(contrarian)
    weight = fusion_views(contrarian, model)["weight"]
    assert weight[[i for i in weight.index if "word_overlap" in i]].sum() < 0.05
    assert overlooked(contrarian, model) is None
    low = {**PRIORS, "bm25": {"family": "lexical", "prior": 0.05}}  # a prior that keeps a weak LF low: as it should
    model = ScoreFusionModel(priors=low).fit_table(agree)
    assert model.fitted().lfs[0].weight < 0.05 and overlooked(agree, model) is None


def test_aggregate_analyze_and_run_warn_with_the_commands_that_act_on_it(tmp_path, capsys):
    cfg = tmp_path / "mine.toml"
    cfg.write_text('[dataset]\nloader = "beir"\npath = "beir"\n[label]\nlfs = ["bm25", "embedding_cosine", '
                   '"bert_cosine"]\n[label.options.bm25]\nprior = 0.2\n')
    paths = RunPaths(tmp_path / "run")
    votes = overridden_votes()  # the declared priors overrule the agreement
    write_parquet(votes.assign(split="train", rank=votes.groupby("query_id").cumcount(), gold=pd.NA), paths.votes)
    paths.dataset.mkdir()  # ingested already: aggregate and analyze read only the votes
    for stages in ("aggregate", "analyze", "aggregate,analyze"):
        assert main(["run", str(cfg), "--stages", stages, "--run-dir", str(paths.root), "--quiet"]) == 0
        out = capsys.readouterr().out.rstrip().splitlines()
        warned = [line for line in out if line.startswith("warning: bm25 has ")]
        assert warned and all(f"— judge 10 queries: `weakrank select {cfg} --run-dir {paths.root} --queries 10`"
                              in line for line in warned)
        assert out[-1] in warned  # the last word of run, where analyze ran or not
