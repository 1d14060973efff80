"""Label-model fit time on 1M pairs × 4 LFs: weakrank's generative model and MV vs Snorkel's LabelModel.

Goal: the generative model fits 1M × 4 in ≤ 5 s on 2 cores. Run: ``python benchmarks/bench_label_model.py``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from snorkel.labeling.model import LabelModel

from weakrank.label_models import GenerativeModel, MajorityVote
from weakrank.voting import to_snorkel


def simulate(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Votes of 4 conditionally independent LFs (known α, β) on n pairs with prior 0.2."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.2, 1, -1)
    alpha, beta = [0.9, 0.8, 0.75, 0.65], [0.5, 0.6, 0.8, 0.9]
    votes = np.zeros((n, 4), dtype=np.int8)
    for i, (a, b) in enumerate(zip(alpha, beta)):
        votes[:, i] = np.where(rng.random(n) < b, np.where(rng.random(n) < a, y, -y), 0)
    return votes, y


def timed(fn) -> tuple[float, object]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--snorkel-epochs", type=int, default=100, help="Snorkel's default")
    args = parser.parse_args()
    votes, y = simulate(args.pairs)

    t_gm, gm = timed(lambda: GenerativeModel().fit(votes))
    t_gm_pred, p_gm = timed(lambda: gm.predict_proba(votes))
    t_mv, p_mv = timed(lambda: MajorityVote().predict_proba(votes))
    L = to_snorkel(votes)
    snorkel = LabelModel(cardinality=2, verbose=False)
    t_sn, _ = timed(lambda: snorkel.fit(L, n_epochs=args.snorkel_epochs, seed=0, progress_bar=False))
    t_sn_pred, p_sn = timed(lambda: snorkel.predict_proba(L)[:, 1])

    def acc(p: np.ndarray) -> float:
        return float(((p > 0.5) == (y == 1)).mean())

    print(f"{args.pairs:,} pairs × 4 LFs")
    print(f"{'model':<28}{'fit s':>8}{'predict s':>11}{'accuracy':>10}")
    print(f"{'weakrank generative (EM)':<28}{t_gm:>8.3f}{t_gm_pred:>11.3f}{acc(p_gm):>10.4f}")
    print(f"{'weakrank majority vote':<28}{0.0:>8.3f}{t_mv:>11.3f}{acc(p_mv):>10.4f}")
    print(f"{'snorkel LabelModel':<28}{t_sn:>8.3f}{t_sn_pred:>11.3f}{acc(p_sn):>10.4f}")
    print(f"fit speed-up generative vs snorkel: {t_sn / t_gm:.1f}x (goal: generative fit ≤ 5 s: {'met' if t_gm <= 5 else 'MISSED'})")


if __name__ == "__main__":
    main()
