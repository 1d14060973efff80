"""The records of judged decisions: each saved with its kind and read back by the one reader, records saved before
they kept a kind read as their readers then told them apart, a changed one refused by file and field."""

from __future__ import annotations

import json
import re

import pytest

from weakrank.errors import DataError
from weakrank.fusion_state import FusionState
from weakrank.records import ChoiceRecord, LFEvidence, PriorUpdateRecord, StudentWeightRecord, read_record, saved_kind

CHOICE = ChoiceRecord("bm25 alone", "bm25 alone", 0.2, 3.0, 10, {"bm25 alone": 0.7, "label-free": 0.5}, "taken",
                      {"margin": 2.5, "min_lead": 0.05, "min_queries": 3})
UPDATE = PriorUpdateRecord((LFEvidence("bm25", 0.6, 0.12, 8, 0.64, 2.5), LFEvidence("dense", 0.9, -0.3, 8, 0.8, 2.5)),
                           {"label-free": 0.5, "judged priors": 0.6}, 8, "moved", {"prior_sd": 0.05, "min_queries": 5})
WEIGHT = StudentWeightRecord("student weight 1", {"student weight 0.35": 0.5, "student weight 1": 0.6}, ["q1", "q2"],
                             "chosen", {"margin": 2.5, "min_lead": 0.05, "min_queries": 3})

# what ChoiceRecord.to_dict saved for each decision before records kept their kind
OLD_CHOICE = {"choice": "bm25 alone", "best": "bm25 alone", "lead": 0.2, "errors": 3.0, "queries": 10,
              "estimates": {"bm25 alone": 0.7, "label-free": 0.5}, "reason": "taken",
              "rule": {"margin": 2.5, "min_lead": 0.05, "min_queries": 3}}
OLD_UPDATE = {"choice": "judged priors", "best": "judged priors", "lead": 0.0, "errors": 0.0, "queries": 8,
              "estimates": {"label-free": 0.5, "judged priors": 0.6}, "reason": "moved",
              "rule": {"prior_sd": 0.05, "min_queries": 5}}
OLD_WEIGHT = {"choice": "student weight 1", "best": "student weight 1", "lead": 0.1, "errors": 3.0,
              "queries": ["q1", "q2"], "estimates": {"student weight 0.35": 0.5, "student weight 1": 0.6},
              "reason": "chosen", "rule": {"margin": 2.5, "min_lead": 0.05, "min_queries": 3},
              "judged_map": {"student weight 0.35": 0.5, "student weight 1": 0.6}}


@pytest.mark.parametrize("record", [CHOICE, UPDATE, WEIGHT], ids=lambda r: r.kind)
def test_each_record_is_saved_with_its_kind_and_read_back_as_it_was(record):
    saved = json.loads(json.dumps(record.to_dict()))
    assert saved["kind"] == record.kind and saved_kind(saved) == record.kind
    assert read_record(saved, "file.json") == record


@pytest.mark.parametrize(("old", "expected"), [(OLD_CHOICE, CHOICE), (OLD_UPDATE, PriorUpdateRecord(
    (), UPDATE.estimates, UPDATE.queries, UPDATE.reason, UPDATE.rule)), (OLD_WEIGHT, WEIGHT)],
    ids=["combination", "prior update", "student weight"])
def test_a_record_saved_before_records_kept_their_kind_still_reads(old, expected):
    assert read_record(old, "file.json") == expected  # an old prior update kept no LF's evidence


def test_a_fusion_state_keeps_a_prior_update_or_a_choice_and_a_mix_is_a_student_weight():
    state = FusionState.of([[0], [1]], [0.6, 0.8], [1.0, 2.0], [1.0, 1.0], record=UPDATE)
    assert FusionState.from_dict(json.loads(json.dumps(state.to_dict())), "labels.parquet", "params.", 2) == state
    old = {**state.to_dict(), "judged": OLD_UPDATE}
    assert FusionState.from_dict(old, "labels.parquet", "params.", 2).record.lfs == ()
    with pytest.raises(DataError, match=r"labels.parquet: params.judged.kind: 'student weight' is not a record kept"):
        FusionState.from_dict({**state.to_dict(), "judged": WEIGHT.to_dict()}, "labels.parquet", "params.", 2)
    with pytest.raises(DataError, match=r"weakrank_fusion.json: mix.kind: 'prior update'"):
        read_record(UPDATE.to_dict(), "weakrank_fusion.json", "mix.", (StudentWeightRecord.kind,))


@pytest.mark.parametrize(("saved", "field"), [
    ({**WEIGHT.to_dict(), "queries": 2}, "mix.queries"),
    ({**UPDATE.to_dict(), "lfs": [{**UPDATE.to_dict()["lfs"][0], "posterior": "high"}]}, "mix.lfs[0].posterior"),
    ({**UPDATE.to_dict(), "lfs": ["bm25"]}, "mix.lfs[0]"),
    ({**CHOICE.to_dict(), "lead": None}, "mix.lead"),
    ({**OLD_WEIGHT, "judged_map": {"student weight 1": "high"}}, "mix.judged_map"),
    ({**CHOICE.to_dict(), "kind": "mix"}, "mix.kind"),
])
def test_a_changed_record_is_refused_by_file_and_field(saved, field):
    with pytest.raises(DataError, match=rf"weakrank_fusion.json: {re.escape(field)}: "):
        read_record(saved, "weakrank_fusion.json", "mix.")
