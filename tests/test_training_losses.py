import math

import pytest
import torch

from weakrank.training.losses import hinge, relaxation, smoothed_target, soft_cross_entropy, weighted_mean


def test_hinge_by_hand():
    out = hinge(torch.tensor([2.0, 0.5, 0.0]), torch.tensor([0.0, 0.0, 1.0]), margin=1.0)
    assert out.tolist() == [0.0, 0.5, 2.0]


def test_label_smoothing_targets_and_plain_ce():
    y = torch.tensor([1.0, 0.0])
    assert smoothed_target(y, 0.2).tolist() == pytest.approx([0.9, 0.1])
    logit = torch.tensor([0.3, -1.2])
    plain = soft_cross_entropy(logit, smoothed_target(y, 0.0))
    expected = [-math.log(1 / (1 + math.exp(-0.3))), -math.log(1 - 1 / (1 + math.exp(1.2)))]
    assert plain.tolist() == pytest.approx(expected)


def test_wsls_moves_smoothing_mass_by_the_sampler_score():
    y = torch.tensor([1.0, 0.0, 0.0, 0.0])
    ns = torch.tensor([0.7, 1.0, 0.0, float("nan")])
    target = smoothed_target(y, 0.2, ns)
    # positive: uniform 1 − ε/2; negatives: ε·ŝ; a negative without a sampler score: uniform ε/2
    assert target.tolist() == pytest.approx([0.9, 0.2, 0.0, 0.1])


def test_label_relaxation_is_zero_inside_the_credal_set_and_kl_outside():
    alpha = 0.1
    inside = torch.tensor([math.log(0.95 / 0.05)])  # p(+) = 0.95 ≥ 0.9
    assert relaxation(inside, torch.tensor([1.0]), alpha).item() == 0.0
    p = 0.6
    outside = torch.tensor([math.log(p / (1 - p))])
    expected = 0.9 * math.log(0.9 / p) + 0.1 * math.log(0.1 / (1 - p))
    assert relaxation(outside, torch.tensor([1.0]), alpha).item() == pytest.approx(expected, rel=1e-6)
    # for a negative the set is p(−) ≥ 1 − α: p(+) = 0.05 is inside, 0.6 is outside
    assert relaxation(-inside, torch.tensor([0.0]), alpha).item() == 0.0
    assert relaxation(outside, torch.tensor([0.0]), alpha).item() == pytest.approx(
        0.9 * math.log(0.9 / 0.4) + 0.1 * math.log(0.1 / 0.6), rel=1e-6
    )
    # α = 0 is plain cross-entropy
    assert relaxation(outside, torch.tensor([1.0]), 0.0).item() == pytest.approx(-math.log(p), rel=1e-6)


def test_noise_aware_weighting():
    losses = torch.tensor([1.0, 3.0])
    assert weighted_mean(losses, None).item() == 2.0
    assert weighted_mean(losses, torch.tensor([1.0, 0.5])).item() == pytest.approx(1.25)
