import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

from weakrank.evaluation.calibration import ece, ranking_ece, reliability_bins, reliability_figure
from weakrank.lists import softmax_within


def test_ranking_ece_by_hand_on_two_queries():
    scores = np.array([np.log(3), 0.0, 5.0, 5.0, 5.0, 5.0])
    gold = np.array([1, 0, 1, 0, 0, 0])
    queries = np.array(["a", "a", "b", "b", "b", "b"])
    # softmax within each list: a: e^ln3 / (3 + 1) = 0.75 and 0.25; b: four equal scores → 0.25 each
    assert softmax_within(scores, queries) == pytest.approx([0.75, 0.25, 0.25, 0.25, 0.25, 0.25])
    # 10 equal-width bins: [0.2, 0.3) holds five 0.25s with gold 0, 1, 0, 0, 0: |0.25 − 1/5| = 0.05;
    # [0.7, 0.8) holds a's 0.75 with gold 1: |0.75 − 1| = 0.25; bin-weighted: (5·0.05 + 1·0.25) / 6 = 1/12
    assert ranking_ece(scores, gold, queries, bins=10) == pytest.approx(1 / 12, abs=1e-6)
    # the old way, ECE of the sigmoid of the same scores: bins of σ(ln 3) = 0.75 (gold 1), σ(0) = 0.5 (gold 0),
    # σ(5) ≈ 0.993 four times (gold 1/4): (1·0.25 + 1·0.5 + 4·|σ(5) − 1/4|) / 6 ≈ 0.62
    sigmoid = (0.25 + 0.5 + 4 * abs(expit(5.0) - 0.25)) / 6
    assert ece(expit(scores), gold) == pytest.approx(sigmoid, abs=1e-6)
    assert abs(sigmoid - 1 / 12) > 0.3


def test_ranking_ece_ignores_the_level_of_each_list():
    rng = np.random.default_rng(0)
    queries = np.repeat(np.arange(20), 5)
    scores, gold = rng.normal(size=100), (rng.random(100) < 0.3).astype(int)
    shifted = scores + np.repeat(rng.normal(scale=10, size=20), 5)  # a pairwise loss never trains these offsets
    assert ranking_ece(shifted, gold, queries) == pytest.approx(ranking_ece(scores, gold, queries), abs=1e-6)
    assert ece(expit(shifted), gold) != pytest.approx(ece(expit(scores), gold), abs=1e-3)


def test_report_plots_the_memorisation_gap_of_tracked_runs_only(tmp_path):
    from weakrank.reproduction.report import gap_figures

    cells = pd.DataFrame({"key": ["k0", "k1", "k2"], "row": ["tracked", "tracked", "untracked"]})
    for key, train in (("k0", [0.5, 0.9]), ("k1", [0.7, 0.9])):
        pd.DataFrame({"step": [10, 20], "dev_map": [0.4, 0.5], "dev_recall@1": [0.4, 0.5], "train_map": [0.5, 0.9],
                      "train_recall@1": train}).to_csv(tmp_path / f"{key}.csv", index=False)
    pd.DataFrame({"step": [10], "dev_map": [0.4], "dev_recall@1": [0.4]}).to_csv(tmp_path / "k2.csv", index=False)
    figures = gap_figures(cells, tmp_path, tmp_path / "out")
    assert [caption for caption, _ in figures] == [
        "Train vs validation recall@1 during training: tracked (Sharma et al., memorisation gap)"]
    assert figures[0][1].stat().st_size > 5000


def test_sampler_table_compares_the_policy_with_fixed_samplers():
    from weakrank.evaluation.tables import results_table
    from weakrank.reproduction.report import sampler_table

    base = pd.DataFrame({"MAP": [0.5, 0.6, 0.7]}, index=list("abc"))
    results = {"supervised": [base],
               "NS bm25": [base - 0.1, base - 0.12], "NS policy": [base + 0.01, base - 0.01, base]}
    rows = ["supervised"] + ["NS bm25"] * 2 + ["NS policy"] * 3
    cells = pd.DataFrame({"key": list("pqrstu"), "row": rows, "sampler": [np.nan] + ["bm25"] * 2 + ["policy"] * 3})
    table = sampler_table(cells, results_table(results), "MAP")
    assert table["sampler"].to_dict() == {"NS bm25": "bm25", "NS policy": "policy"}
    assert table.loc["NS policy", "seeds"] == 3
    assert table.loc["NS policy", "MAP std"] == pytest.approx(0.01)  # seed means 0.61, 0.59, 0.60
    assert sampler_table(cells[cells["sampler"] != "policy"], results_table(results), "MAP") is None


def test_reliability_diagram_has_a_panel_per_system_with_bin_counts():
    rng = np.random.default_rng(0)
    curves = {name: (rng.random(200), (rng.random(200) < 0.3).astype(int)) for name in ("majority", "snorkel", "ranker")}
    bins = reliability_bins(*curves["majority"], bins=10)
    assert bins["count"].sum() == 200 and (bins["count"] > 0).all()
    prob, gold = np.array([0.05, 0.1, 0.15, 0.95]), np.array([0, 1, 1, 1])  # 0.1 falls in the first bin, as sklearn
    assert reliability_bins(prob, gold).to_dict("list") == {
        "bin": [0, 1, 9], "predicted": pytest.approx([0.075, 0.15, 0.95]), "observed": [0.5, 1.0, 1.0], "count": [2, 1, 1]}
    fig = reliability_figure(curves, queries=40)
    panels = [ax for ax in fig.axes if "ECE" in ax.get_title()]
    assert [ax.get_title().split("\n")[0] for ax in panels] == list(curves)  # one panel per system
    for ax, (prob, gold) in zip(panels, curves.values()):
        assert f"ECE {ece(prob, gold):.3f}" in ax.get_title()
        assert any(line.get_linestyle() == "--" for line in ax.get_lines())  # the diagonal
    twins = [ax for ax in fig.axes if ax.get_ylabel().startswith("pairs per bin")]
    assert len(twins) == len(curves)
    labels = [int(text.get_text()) for text in twins[0].texts]
    assert labels == bins["count"].tolist()  # the count written above each bin's bar
    assert "40 queries" in fig.get_suptitle()
