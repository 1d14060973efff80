from snorkel.labeling import PandasLFApplier

from labeling_functions import bm25, tfidf, word_overlap
from weakrank.labeling import apply_lfs, vote_matrix
from weakrank.snorkel_bridge import to_snorkel_lf
from weakrank.voting import to_snorkel


def test_snorkel_applier_gives_the_same_label_matrix(tiny):
    lfs = [bm25, tfidf, word_overlap]
    ours = to_snorkel(vote_matrix(apply_lfs(tiny, lfs, progress=False)))
    applier = PandasLFApplier([to_snorkel_lf(lf, tiny) for lf in lfs])
    theirs = applier.apply(tiny.pairs(), progress_bar=False)
    assert (theirs == ours).all()
    assert set(theirs.ravel()) <= {-1, 0, 1} and (theirs == 1).sum() == 6  # top-1 of 2 queries × 3 LFs
