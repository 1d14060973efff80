"""votes.parquet keeps each score column's declaration: later stages read it there and build no LF, unless the votes
keep none of the configured LFs with their options (votes of an earlier weakrank, a [label] changed since)."""

from dataclasses import replace

import pytest

import weakrank.registry
from tests.conftest import OWN
from weakrank import pipeline
from weakrank.config import load_config
from weakrank.errors import DataError
from weakrank.io import read_parquet_table, write_parquet
from weakrank.paths import RunPaths
from weakrank.votes_file import read_votes_info


@pytest.fixture
def labelled(tmp_path):
    """The own collection ingested and labelled."""
    cfg = load_config(OWN / "pipeline.toml", run_dir=tmp_path / "run")
    pipeline.ingest(cfg)
    pipeline.label(cfg, progress=False)
    return cfg


def builds(monkeypatch) -> list[str]:
    """A spy on the registry's builder: the spec of each LF built from now on."""
    built, real = [], weakrank.registry._call_factory

    def spy(spec, *args):
        built.append(spec)
        return real(spec, *args)

    monkeypatch.setattr(weakrank.registry, "_call_factory", spy)
    return built


def test_the_declarations_are_read_from_the_votes_without_building_an_lf(labelled, monkeypatch):
    expected = weakrank.registry.lf_priors(labelled.label.lfs, labelled.label.lf_options)
    built = builds(monkeypatch)
    assert labelled.lf_priors() == expected and list(labelled.lf_priors()) == list(expected)  # values and order
    assert labelled.fusion_options()["priors"] == expected
    assert built == []
    info = read_votes_info(RunPaths(labelled.run_dir).votes)
    assert [d.spec for d in info.declarations.values()] == labelled.label.lfs and info.lfs == list(expected)


def test_a_declaration_changed_in_the_config_since_label_takes_effect(labelled, monkeypatch):
    options = {**labelled.label.lf_options, "bm25": {"prior": 0.9, "family": "mine"}}
    changed = replace(labelled, label=replace(labelled.label, lf_options=options))
    built = builds(monkeypatch)
    assert changed.lf_priors()["bm25"] == {"family": "mine", "prior": 0.9}
    assert sorted(built) == sorted(labelled.label.lfs)  # the votes do not say: built, as before they kept it


def test_votes_of_an_earlier_weakrank_fall_back_to_building_the_lfs(labelled, monkeypatch):
    votes = RunPaths(labelled.run_dir).votes
    table, meta = read_parquet_table(votes)
    write_parquet(table, votes, metadata={k: v for k, v in meta.items() if k != "declarations"})
    built = builds(monkeypatch)
    assert labelled.lf_priors() == weakrank.registry.lf_priors(labelled.label.lfs, labelled.label.lf_options)
    assert built  # a resumed run directory still aggregates, as before
    write_parquet(table, votes, metadata={**meta, "declarations": {"bm25": {**meta["declarations"]["bm25"],
                                                                             "prior": "high"}}})
    with pytest.raises(DataError, match=r"votes.parquet.*declarations\.bm25\.prior"):
        read_votes_info(votes)
