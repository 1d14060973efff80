"""What training measures at each evaluation: each list ranked by the model against its labels (MAP, recall@1) and
its agreement with the teacher's order (:func:`teacher_ndcg`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from ir_measures import AP, R

from weakrank.evaluation.metrics import evaluate_run
from weakrank.training.data import TrainingData
from weakrank.training.rankers import Ranker

LIST_MEASURES = {"map": AP, "recall@1": R @ 1}


def teacher_ndcg(scores: np.ndarray, teacher: np.ndarray, temperature: float = 1.0) -> float:
    """nDCG of the order of ``scores`` with the teacher's softmax(standardised score / ``temperature``) as graded
    gains: how closely a list is ranked as its teacher ranks it, on every list the teacher ranks (ties in
    ``scores`` keep the list's order)."""
    gains = np.exp((teacher - teacher.max()) / temperature)
    gains /= gains.sum()
    discount = 1.0 / np.log2(np.arange(2, len(gains) + 2))
    ideal = np.sort(gains)[::-1] @ discount
    return float(gains[np.argsort(-scores, kind="stable")] @ discount / ideal)


def list_scores(model: Ranker, data: TrainingData, query_ids: list[str],
                batch_size: int = 64) -> list[tuple[str, np.ndarray]]:
    """The model's scores of each list of ``query_ids`` with at least two candidates, every pair scored in one call
    (full batches)."""
    ranked = [qid for qid in query_ids if len(data.lists[qid].passage_ids) >= 2]
    pairs = [(data.query_text[qid], data.passage_text[p]) for qid in ranked for p in data.lists[qid].passage_ids]
    if not pairs:
        return []
    flat = np.asarray(model.predict(pairs, batch_size=batch_size), dtype=np.float64)
    ends = np.cumsum([len(data.lists[qid].passage_ids) for qid in ranked])
    return list(zip(ranked, np.split(flat, ends[:-1])))


def agreements(model: Ranker, data: TrainingData, query_ids: list[str], batch_size: int = 64,
               temperature: float = 1.0) -> np.ndarray:
    """:func:`teacher_ndcg` of each list of ``query_ids`` that the teacher ranks, in order."""
    return np.array([teacher_ndcg(scores, data.lists[qid].teacher, temperature)
                     for qid, scores in list_scores(model, data, query_ids, batch_size)
                     if data.lists[qid].teacher.std() > 0])


def ranking_metrics(model: Ranker, data: TrainingData, query_ids: list[str], batch_size: int = 64,
                    temperature: float = 1.0) -> dict[str, float]:
    """The model's ranking of each query's list against its labels: MAP and recall@1 (ir-measures; tied scores in
    random order) on the lists with a relevant and a non-relevant pair, ``agreement`` (:func:`teacher_ndcg`) on
    every list the teacher ranks; ``map_queries`` and ``agreement_queries`` count the lists each used."""
    return list_measures(model, data, query_ids, batch_size, temperature)[0]


def list_measures(model: Ranker, data: TrainingData, query_ids: list[str], batch_size: int = 64,
                  temperature: float = 1.0) -> tuple[dict[str, float], np.ndarray]:
    """:func:`ranking_metrics`, and the agreement of each list the teacher ranks (what :func:`agreements` gives),
    from one scoring of the lists."""
    lists, agreement = [], []
    for qid, scores in list_scores(model, data, query_ids, batch_size):
        ql = data.lists[qid]
        if ql.teacher.std() > 0:
            agreement.append(teacher_ndcg(scores, ql.teacher, temperature))
        relevant = (ql.labels == 1).astype(int)
        if relevant.min() != relevant.max():
            lists.append(pd.DataFrame({"query_id": qid, "passage_id": ql.passage_ids, "score": scores,
                                       "relevance": relevant}))
    out = {name: float("nan") for name in LIST_MEASURES}
    if lists:
        table = pd.concat(lists, ignore_index=True)
        per_query = evaluate_run(table[["query_id", "passage_id", "score"]],
                                 table[["query_id", "passage_id", "relevance"]], rn=(), measures=LIST_MEASURES)
        out = {name: float(value) for name, value in per_query.mean().items()}
    return {**out, "map_queries": len(lists), "agreement": float(np.mean(agreement)) if agreement else float("nan"),
            "agreement_queries": len(agreement)}, np.asarray(agreement, dtype=np.float64)
