"""weakrank: train neural rankers without ground-truth labels, by data programming.

Data flows one way: dataset → candidates → votes → labels → model → metrics.
"""

from weakrank.dataset import Dataset
from weakrank.lf import PairBatch, RankingLF, VoteRule, lf_factory, ranking_lf

__version__ = "0.1.0"
__all__ = ["Dataset", "PairBatch", "RankingLF", "VoteRule", "lf_factory", "ranking_lf", "__version__"]
