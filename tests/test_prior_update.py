"""Judgments that update the LFs' quality priors (weakrank.judged.prior_update, PriorSelector), on own-made lists."""

import copy
import json
from dataclasses import replace

import numpy as np
import pandas as pd

from weakrank.fusion_state import FusionState
from weakrank.judged.aligned import Judged
from weakrank.judged.prior_update import MIN_QUERIES, NAME, PriorSelector
from weakrank.label_models.fusion import ScoreFusionModel
from weakrank.lists import average_precisions

# the lexical LF is declared weak, the semantic one strong: the two camps agreement alone cannot tell apart
PRIORS = {"lexical": {"family": "lexical", "prior": 0.35}, "semantic": {"family": "semantic", "prior": 0.9}}


def two_camps(queries: int, size: int = 20, seed: int = 0) -> pd.DataFrame:
    """Lists whose lexical LF finds the relevant passages and whose "semantic" LF, declared the better, follows only a
    topic both share (noise as to relevance): a votes table with gold."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(queries), size)
    gold = np.zeros(len(groups))
    for q in range(queries):
        gold[q * size + rng.choice(size, size=rng.integers(1, 4), replace=False)] = 1
    topic = rng.normal(size=len(groups))
    lexical = 1.5 * gold + topic + rng.normal(size=len(groups))
    semantic = topic + 0.7 * rng.normal(size=len(groups))
    votes = pd.DataFrame({"query_id": [f"q{g}" for g in groups], "passage_id": [f"p{i}" for i in range(len(groups))],
                          "split": "train", "gold": gold})
    for name, score in (("lexical", lexical), ("semantic", semantic)):
        votes[f"score_{name}"], votes[f"vote_{name}"] = score, 0
    return votes


def judged_rows(votes: pd.DataFrame, queries: set[str]) -> Judged:
    rows = votes["query_id"].isin(queries).to_numpy()
    gold = votes["gold"].to_numpy(float)
    return Judged(np.where(rows, gold, np.nan), np.where(rows, 1.0, np.nan), pd.Series(1.0, index=sorted(queries)))


def weight(state: FusionState, lf: str) -> float:
    return next(w.weight for w in state.lfs if w.lf == lf)


def held_out_map(votes: pd.DataFrame, model: ScoreFusionModel, judged: set[str]) -> float:
    rows = ~votes["query_id"].isin(judged).to_numpy()
    scores = votes[["score_lexical", "score_semantic"]].to_numpy()
    fused = model.fused(scores, votes["query_id"].to_numpy())
    return float(average_precisions(fused[rows], votes["query_id"].to_numpy()[rows],
                                    votes["gold"].to_numpy(float)[rows]).mean())


def test_judgments_that_show_an_lf_is_noise_lower_its_weight_more_as_they_grow():
    votes = two_camps(200)
    base = ScoreFusionModel(priors=PRIORS)
    unjudged = ScoreFusionModel(priors=PRIORS).fit_table(votes)
    assert weight(unjudged.state_, "semantic") > 0.6  # the prior decides: the noise is weighed the most
    found = {}
    for n in (10, 60):
        queries = {f"q{i}" for i in range(n)}
        selector = PriorSelector(base).fit(votes, judged_rows(votes, queries))
        evidence = {e.lf: e for e in selector.update_.lfs}
        assert evidence["semantic"].gap < 0 < evidence["lexical"].gap  # beyond the teacher: noise below, signal above
        assert evidence["semantic"].posterior < 0.9 and evidence["lexical"].posterior > 0.35
        found[n] = weight(selector.state_, "semantic")
        assert found[n] < weight(unjudged.state_, "semantic")
        assert held_out_map(votes, selector.model_, queries) > held_out_map(votes, unjudged, queries)
    assert found[60] < found[10] - 0.05  # more judgments move it further
    state = selector.state_
    assert NAME in state.record.estimates and state.record.lfs == selector.update_.lfs and state.record.queries == 60 and "semantic 0.90 →" in state.record.reason
    assert FusionState.from_dict(json.loads(json.dumps(state.to_dict())), "labels.parquet", "params.", 2) == state


def test_no_judgments_leave_the_state_as_without_them():
    votes = two_camps(40)
    unjudged = ScoreFusionModel(priors=PRIORS).fit_table(votes).state_
    none = Judged(np.full(len(votes), np.nan), np.full(len(votes), np.nan), pd.Series(dtype=float))
    assert PriorSelector(ScoreFusionModel(priors=PRIORS)).fit(votes, none).state_ == unjudged
    too_few = {f"q{i}" for i in range(MIN_QUERIES - 1)}
    selector = PriorSelector(ScoreFusionModel(priors=PRIORS)).fit(votes, judged_rows(votes, too_few))
    assert replace(selector.state_, record=None) == unjudged  # only the record of why nothing moved
    assert f"fewer than the {MIN_QUERIES} an update needs: the declared priors are kept" in selector.state_.record.reason


def test_an_lf_with_no_prior_is_centred_on_its_loading_without_judgments():
    votes = two_camps(100)
    priors = {"semantic": PRIORS["semantic"]}  # the lexical LF declares nothing
    unjudged = ScoreFusionModel(priors=priors).fit_table(votes).state_
    selector = PriorSelector(ScoreFusionModel(priors=priors)).fit(votes, judged_rows(votes, {f"q{i}" for i in range(30)}))
    lexical = next(e for e in selector.update_.lfs if e.lf == "lexical")
    assert lexical.prior == next(w.loading for w in unjudged.lfs if w.lf == "lexical")
    assert lexical.posterior > lexical.prior


def test_the_selector_leaves_its_base_as_it_was():
    votes = two_camps(60)
    priors = copy.deepcopy(PRIORS)
    base = ScoreFusionModel(priors=priors, prior_strength=7.0).fit_table(votes)
    fitted, saved = base.state_, base.state_.to_dict()
    selector = PriorSelector(base).fit(votes, judged_rows(votes, {f"q{i}" for i in range(30)}))
    assert selector.state_ != fitted and selector.update_.strength > 7.0
    assert base.state_ is fitted and base.state_.to_dict() == saved
    assert base.priors is priors and priors == PRIORS and base.prior_strength == 7.0
    unfitted = ScoreFusionModel(priors=PRIORS, temperature=0.5)
    PriorSelector(unfitted).fit(votes, judged_rows(votes, {f"q{i}" for i in range(30)}))
    assert unfitted.state_ is None and unfitted.options()["temperature"] == 0.5  # not fitted: a copy was
