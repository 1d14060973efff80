"""The warning of an LF the labels leave out: weighted near zero by the fusion label model, yet its first candidate
differs from the fused ranking's on most lists, or it leads the judged sample (a sample once ranked best the LF
that had 1.5 % of the teacher's weight, and nothing said so)."""

import numpy as np
import pandas as pd
from test_analysis import score_votes

from weakrank.analysis import fusion_views
from weakrank.cli import main
from weakrank.io import write_parquet
from weakrank.judged.advice import overlooked
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.paths import RunPaths


def with_contrarian(votes: pd.DataFrame, seed: int = 1) -> pd.DataFrame:
    """``votes`` plus ``word_overlap``: a score of its own, shared with no other LF (the model weights it ~0)."""
    score = np.random.default_rng(seed).normal(size=len(votes))
    return votes.assign(score_word_overlap=score, vote_word_overlap=np.where(score > 1, 1, -1).astype(np.int8))


def test_an_lf_weighted_near_zero_that_disagrees_is_named():
    agree = score_votes(relevance=3.0)
    model = ScoreFusionModel().fit_table(agree)
    assert overlooked(agree, model) is None  # every LF weighted, and agreeing with the fused ranking
    votes = with_contrarian(agree)
    model = ScoreFusionModel().fit_table(votes)
    weight = fusion_views(votes, model)["weight"]
    assert weight[[i for i in weight.index if "word_overlap" in i]].sum() < 0.05
    line = overlooked(votes, model)
    assert line.startswith("word_overlap has ") and "of the label model's weight, yet its first candidate differs " \
        "from the fused ranking's on" in line and "the labels and the ranker trained on them miss it" in line
    differs = int(line.split("ranking's on ")[1].split("%")[0])
    assert differs > 50
    led = overlooked(votes, model, {"word_overlap alone": 0.61, "fused": 0.55})
    assert "and it leads the judged sample (estimated MAP 0.610)" in led


def test_aggregate_analyze_and_run_warn_with_the_commands_that_act_on_it(tmp_path, capsys):
    cfg = tmp_path / "mine.toml"
    cfg.write_text('[dataset]\nloader = "beir"\npath = "beir"\n[label]\nlfs = ["bm25", "embedding_cosine", '
                   '"bert_cosine", "word_overlap"]\n')
    paths = RunPaths(tmp_path / "run")
    votes = with_contrarian(score_votes(relevance=3.0))
    write_parquet(votes.assign(split="train", rank=votes.groupby("query_id").cumcount(), gold=pd.NA), paths.votes)
    paths.dataset.mkdir()  # ingested already: aggregate and analyze read only the votes
    for stages in ("aggregate", "analyze", "aggregate,analyze"):
        assert main(["run", str(cfg), "--stages", stages, "--run-dir", str(paths.root), "--quiet"]) == 0
        out = capsys.readouterr().out.rstrip().splitlines()
        warned = [line for line in out if line.startswith("warning: word_overlap has ")]
        assert warned and all(f"— judge 10 queries: `weakrank select {cfg} --run-dir {paths.root} --queries 10`"
                              in line for line in warned)
        assert out[-1] in warned  # the last word of run, where analyze ran or not
