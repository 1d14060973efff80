"""Dask and Spark engines give the same scores and votes as the in-process path, on real data, and share its
score cache."""

import numpy as np
import pandas as pd
import pytest

from labeling_functions import make_bm25, make_embedding_cosine, make_tfidf, word_overlap
from tests.conftest import shared
from weakrank.engines import EngineConfig, bundle, label_dataset, label_to_parquet, run_engine
from weakrank.engines.partitions import iter_votes, part_ids, partition_bounds, read_part, vote_columns
from weakrank.errors import ConfigError
from weakrank.labeling import apply_lfs, lf_names
from weakrank.loaders import load_dataset

pytest.importorskip("dask.dataframe")
pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def wikiqa():
    """25 WikiQA test queries (about 200 pairs), small partitions so there are several of them."""
    return load_dataset("wikiqa", shared("wikiqa"), splits=("test",)).subset(max_queries=25)


def cheap_lfs():
    return [make_bm25(), make_tfidf(), word_overlap]


@pytest.fixture(scope="module")
def reference(wikiqa):
    return apply_lfs(wikiqa, cheap_lfs(), progress=False)


@pytest.fixture(scope="module")
def dask_client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            yield client


@pytest.fixture(scope="module")
def spark():
    import shutil

    pytest.importorskip("pyspark")
    if shutil.which("java") is None:
        pytest.skip("Spark needs a Java runtime (java not on PATH)")
    from weakrank.engines.spark_engine import session

    spark = session("local[2]", progress=False)
    yield spark
    spark.stop()


def test_partitions_keep_query_lists_whole_and_align_to_lf_chunks():
    qid = np.repeat(np.arange(6), [3, 4, 2, 5, 1, 3])
    bounds = partition_bounds(qid, part_rows=6, chunk_size=4)
    assert bounds[0][0] == 0 and bounds[-1][1] == len(qid)
    for (_, end), (start, _) in zip(bounds[:-1], bounds[1:]):
        assert end == start and qid[end - 1] != qid[end]  # a cut never falls inside a query's list


@pytest.mark.slow
def test_parquet_round_trip_in_partitions(wikiqa, reference, dask_client, tmp_path):
    engine = EngineConfig("dask", {"client": dask_client}, part_rows=40, chunk_size=20)
    votes_dir = label_to_parquet(wikiqa, cheap_lfs(), engine, tmp_path, progress=False)
    parts = part_ids(tmp_path / "pairs")
    assert len(parts) > 2
    seen = pd.concat([read_part(tmp_path / "pairs", p) for p in parts])
    assert sorted(seen["_row"]) == list(range(len(wikiqa.candidates)))
    assert seen.groupby("query_id")["part"].nunique().max() == 1
    assert vote_columns(votes_dir) == ["vote_bm25", "vote_tfidf", "vote_word_overlap"]
    chunks = list(iter_votes(votes_dir, columns=vote_columns(votes_dir), batch_rows=50))
    assert len(chunks) > 1 and list(chunks[0].columns) == vote_columns(votes_dir)
    assert sum(map(len, chunks)) == len(reference)
    # a second run replaces the dataset atomically: no temp directories are left behind
    label_to_parquet(wikiqa, cheap_lfs(), engine, tmp_path, progress=False)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pairs", "votes"]


def test_local_engine_is_the_in_process_path(wikiqa, reference, tmp_path):
    votes = label_dataset(wikiqa, cheap_lfs(), EngineConfig("local"), tmp_path / "work", progress=False)
    pd.testing.assert_frame_equal(votes, reference)
    assert not (tmp_path / "work").exists()  # no partitioned dataset: the pairs are labelled in memory
    with pytest.raises(ConfigError, match="in process"):
        label_to_parquet(wikiqa, cheap_lfs(), EngineConfig("local"), tmp_path, progress=False)
    with pytest.raises(ConfigError, match="in process"):
        run_engine(EngineConfig("local"), tmp_path / "pairs", tmp_path / "votes", cheap_lfs(), wikiqa)


@pytest.mark.slow
def test_dask_engine_matches_local(wikiqa, reference, dask_client, tmp_path):
    engine = EngineConfig("dask", {"client": dask_client}, part_rows=40, chunk_size=20)
    votes = label_dataset(wikiqa, cheap_lfs(), engine, tmp_path, progress=False)
    pd.testing.assert_frame_equal(votes, reference)


@pytest.mark.slow
def test_spark_engine_matches_local(wikiqa, reference, spark, tmp_path):
    engine = EngineConfig("spark", {"spark": spark}, part_rows=40, chunk_size=20)
    votes = label_dataset(wikiqa, cheap_lfs(), engine, tmp_path, progress=False)
    pd.testing.assert_frame_equal(votes, reference)


@pytest.mark.slow
def test_embedding_model_loads_once_per_dask_worker(wikiqa, dask_client, tmp_path):
    small = wikiqa.subset(max_queries=5)
    lfs = [make_embedding_cosine(batch_size=16), word_overlap]
    reference = apply_lfs(small, lfs, progress=False, chunk_size=8)  # the same LF batches as the partitions
    engine = EngineConfig("dask", {"client": dask_client}, part_rows=8, chunk_size=8)
    votes = label_dataset(small, lfs, engine, tmp_path, progress=False)
    assert len(part_ids(tmp_path / "pairs")) > 2  # more partitions than workers
    pd.testing.assert_frame_equal(votes, reference)
    loads = dask_client.run(lambda: len(bundle._RESOURCES))
    assert len(loads) == 2 and max(loads.values()) == 1  # at most one load per worker process, however many parts


def test_engine_options_are_checked():
    with pytest.raises(ConfigError, match="unknown label engine"):
        EngineConfig("ray")
    with pytest.raises(ConfigError, match="master"):
        EngineConfig("dask", {"master": "local[*]"})


@pytest.mark.slow
def test_pipeline_label_on_dask_matches_local_with_a_user_lf_file_and_shares_its_cache(
    tmp_path, dask_client, monkeypatch
):
    import shutil

    from tests.test_pipeline import write_config
    from weakrank.config import load_config
    from weakrank.io import read_metadata
    from weakrank.paths import RunPaths
    from weakrank.pipeline import ingest, label

    cfg = load_config(write_config(tmp_path, extra="[label.dask]\npart_rows = 30\nchunk_size = 30"))
    paths = RunPaths(cfg.run_dir)
    ingest(cfg)
    distributed = label(cfg, progress=False, engine="dask", client=dask_client)
    assert len(part_ids(paths.partitioned / "pairs")) > 2
    pd.testing.assert_frame_equal(pd.read_parquet(paths.votes), distributed)
    meta = read_metadata(paths.votes)
    names = lf_names(distributed)
    assert meta["engine"] == "dask" and meta["lfs"] == names and len(meta["rules"]) == len(names) > 2
    assert sorted(p.name for p in paths.lf_scores.iterdir()) == sorted(f"{name}.parquet" for name in names)

    # switching engines recomputes nothing: every LF's scores come from the cache the other engine wrote
    def computed(*_args, **_kwargs):
        raise AssertionError("an LF was scored again")

    monkeypatch.setattr("weakrank.labeling.score_lf", computed)
    shutil.rmtree(paths.partitioned)
    local = label(cfg, progress=False, engine="local")
    pd.testing.assert_frame_equal(local, distributed)
    assert {k: read_metadata(paths.votes)[k] for k in meta} == {**meta, "engine": "local"}
    label(cfg, progress=False, engine="dask", client=dask_client)
    assert not paths.partitioned.exists()  # nothing left to score, so no pairs were written for the workers
    monkeypatch.undo()
    pd.testing.assert_frame_equal(label(cfg, progress=False, engine="local", force=True), distributed)


def test_engine_config_keys_and_cli_flags(tmp_path):
    from tests.test_pipeline import write_config
    from weakrank.commands import build_parser
    from weakrank.config import load_config

    path = write_config(tmp_path, extra='[label.spark]\nmaster = "spark://head:7077"')
    path.write_text(path.read_text().replace("[label]\n", '[label]\nengine = "spark"\n'))
    cfg = load_config(path)
    assert (cfg.label.engine, cfg.label.engine_options) == ("spark", {"spark": {"master": "spark://head:7077"}})
    args = build_parser().parse_args(["label", "x.toml", "--engine", "dask", "--address", "tcp://head:8786"])
    from weakrank.commands import engine_overrides

    assert (args.engine, engine_overrides(args)) == ("dask", {"address": "tcp://head:8786"})
    assert (
        build_parser().parse_args(["run", "x.toml", "--engine", "spark", "--master", "local[2]"]).master == "local[2]"
    )


def test_streaming_label_model_fit_equals_in_memory_fit(reference):
    from weakrank.label_models import GenerativeModel
    from weakrank.label_models.streaming import pattern_counts
    from weakrank.labeling import vote_matrix

    matrix = vote_matrix(reference)
    in_memory = GenerativeModel().fit(matrix)
    chunks = [matrix[i : i + 37] for i in range(0, len(matrix), 37)]
    streamed = GenerativeModel().fit_counts(*pattern_counts(chunks))
    assert streamed.state() == in_memory.state()
    assert in_memory.state()["iterations"] > 1
