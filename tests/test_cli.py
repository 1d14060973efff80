import re

import ir_measures
import numpy as np
import pandas as pd
import pytest

from tests.conftest import shared
from weakrank.cli import main
from weakrank.errors import ConfigError, DataError
from weakrank.evaluation.metrics import MEASURES
from weakrank.evaluation.tables import runs_table
from weakrank.io import read_qrels, read_run, write_parquet, write_qrels, write_run
from weakrank.paths import RunPaths
from weakrank.training.config import MODES


def small_config(tmp_path, lfs='["bm25", "tfidf"]'):  # TrecQA, 2 queries a split
    cfg = tmp_path / "small.toml"
    cfg.write_text(f'''name = "small"\nrun_dir = "{tmp_path / 'run'}"\n[dataset]\nloader = "trecqa"\n'''
                   f'''path = "{shared('trecqa')}"\nmax_queries = 2\n[label]\nlfs = {lfs}\n''')
    return cfg


@pytest.fixture
def trec_files(tmp_path):
    """A qrels file (every query with relevant and non-relevant passages) and two runs without ties."""
    rng = np.random.default_rng(0)
    qrels = pd.DataFrame([(f"q{q}", f"d{d}", int(rng.random() < 0.3) if d else 1) for q in range(8) for d in range(12)],
                         columns=["query_id", "passage_id", "relevance"])
    qrels.loc[qrels["passage_id"] == "d11", "relevance"] = 0
    write_qrels(qrels, tmp_path / "qrels.trec")
    runs = []
    for name in ("first", "second"):
        scored = qrels[["query_id", "passage_id"]].assign(score=rng.random(len(qrels)))
        runs.append(write_run(scored, tmp_path / f"{name}.trec", name))
    return tmp_path / "qrels.trec", runs


def test_trec_files_round_trip_through_ir_measures_readers(trec_files):
    qrels_path, (run_path, _) = trec_files
    qrels = read_qrels(qrels_path)
    assert list(qrels.columns) == ["query_id", "passage_id", "relevance"] and len(qrels) == 96
    run = read_run(run_path)
    assert list(run.columns) == ["query_id", "passage_id", "score"] and len(run) == 96
    bad = run_path.with_name("bad.trec")
    bad.write_text("q1 Q0 d1 1 0.5 x\nq1 Q0 d2 2 notanumber x\n")
    with pytest.raises(DataError, match="bad.trec:2: score: score 'notanumber' is not a number"):
        read_run(bad)


RUN_TEXT = "q2 Q0 d1 1 3.5 sys\n\nq1\tQ0 d2 1 -1e-3 sys\r\n  \nq1 Q0 d3 2 -2 sys\n"


def test_read_run_and_read_qrels_equal_ir_measures_readers(tmp_path):
    run, qrels = tmp_path / "a.run", tmp_path / "a.qrels"
    run.write_text(RUN_TEXT)
    qrels.write_text("q1 0 d2 2\n\nq1 Q0 d3 0\r\nq2 0 d1 -1\n")
    direct = pd.DataFrame(ir_measures.read_trec_run(str(run)))
    pd.testing.assert_frame_equal(read_run(run), direct.rename(columns={"doc_id": "passage_id"}))
    direct = pd.DataFrame(ir_measures.read_trec_qrels(str(qrels)))[["query_id", "doc_id", "relevance"]]
    pd.testing.assert_frame_equal(read_qrels(qrels), direct.rename(columns={"doc_id": "passage_id"}))


def test_read_run_and_read_qrels_give_each_row_its_file_and_line(tmp_path):
    run = tmp_path / "a.run"
    run.write_text(RUN_TEXT)
    rows = read_run(run, lines=True)
    assert rows["_line"].tolist() == [1, 3, 5] and set(rows["_file"]) == {str(run)}
    assert rows["passage_id"].tolist() == ["d1", "d2", "d3"] and rows["score"].tolist() == [3.5, -1e-3, -2.0]
    qrels = tmp_path / "a.qrels"
    qrels.write_text("\nq1 0 d2 2\n")
    assert read_qrels(qrels, lines=True)[["passage_id", "relevance", "_line"]].values.tolist() == [["d2", 2, 2]]


@pytest.mark.parametrize(("reader", "text", "error"), [
    (read_run, "q1 Q0 d1 1 2.0 x\n\nq1 Q0 d2 2 high x\n", "bad:3: score: score 'high' is not a number"),
    (read_run, "q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 nan x\n", "bad:2: score: score 'nan' is not a number"),
    (read_run, "q1 Q0 d1 1 -inf x\n", "bad:1: score: score '-inf' is not a number"),
    (read_run, "q1 Q0 d1 1 2.0 x\nq1 Q0 d2 2 1.0\n", r"bad:2: 5 fields, expected 6 \(query_id, q0, passage_id, rank"),
    (read_qrels, "q1 0 d1 1\n\n\nq1 0 d2 0.5\n", "bad:4: relevance: relevance '0.5' is not an integer"),
    (read_qrels, "q1 0 d1 1 x\n", r"bad:1: 5 fields, expected 4 \(query_id, iteration, passage_id, relevance\)"),
])
def test_trec_readers_locate_the_first_bad_line(tmp_path, reader, text, error):
    (tmp_path / "bad").write_text(text)
    with pytest.raises(DataError, match=error):
        reader(tmp_path / "bad")


def test_evaluate_plain_trec_files_equals_ir_measures(trec_files, capsys):
    qrels_path, runs = trec_files
    table = runs_table(runs, read_qrels(qrels_path))
    for run in runs:
        direct = ir_measures.calc_aggregate(list(MEASURES.values()), ir_measures.read_trec_qrels(str(qrels_path)),
                                            ir_measures.read_trec_run(str(run)))
        for name, measure in MEASURES.items():
            assert table.loc[run.stem, name] == pytest.approx(direct[measure], abs=1e-9), (run.stem, name)
    assert main(["evaluate", "--qrels", str(qrels_path), *map(str, runs)]) == 0
    out = capsys.readouterr().out
    assert "first" in out and "second" in out and f"{table.loc['second', 'MAP']:.3f}" in out
    assert f"n = {table.loc['first', 'queries']} queries (with a relevant and a non-relevant candidate)" in out


def test_ingest_writes_the_qrels_as_a_trec_file(tmp_path, capsys):
    assert main(["ingest", str(small_config(tmp_path))]) == 0
    dataset = tmp_path / "run" / "dataset"
    parquet = pd.read_parquet(dataset / "qrels.parquet").astype({"relevance": int})
    assert len(parquet) > 0
    pd.testing.assert_frame_equal(read_qrels(dataset / "qrels.trec"), parquet[["query_id", "passage_id", "relevance"]])


def subcommands() -> dict:
    from weakrank.commands import build_parser

    parser = build_parser()
    return next(a for a in parser._actions if a.choices and "train" in a.choices).choices


def test_every_module_that_registers_commands_is_found():
    """The CLI finds each module that defines ``register(add)``, all of them in ``commands/`` (judged mode's
    ``select`` and ``judge`` too); the stages' sub-commands come first."""
    import ast
    from pathlib import Path

    import weakrank
    from weakrank.commands import command_modules

    root = Path(weakrank.__file__).parent
    registering = {".".join(path.relative_to(root.parent).with_suffix("").parts) for path in root.rglob("*.py")
                   if any(isinstance(node, ast.FunctionDef) and node.name == "register"
                          for node in ast.parse(path.read_text()).body)}
    assert {module for _, module in command_modules()} == registering
    assert {"weakrank.commands.judge", "weakrank.commands.select"} <= registering
    names = list(subcommands())
    assert {"judge", "select"} <= set(names) and names[0] == "ingest"


def test_every_option_of_every_subcommand_has_a_help_line():
    for name, parser in subcommands().items():
        for action in parser._actions:
            assert action.help and action.help.strip() not in ("", "(default: None)"), (name, action.option_strings)
    options = {a.dest: a for a in subcommands()["train"]._actions}
    assert options["lr"].option_strings == ["--learning-rate", "--lr"]
    assert tuple(options["mode"].choices) == MODES


def test_hugging_face_names_and_today_s_names_set_the_same_train_option():
    train = subcommands()["train"]
    hf = train.parse_args(["c.toml", "--learning-rate", "1e-4", "--num-train-epochs", "2", "--warmup-ratio", "0.2",
                           "--max-grad-norm", "0.5", "--eval-steps", "10", "--save-steps", "20", "--output-dir", "m2",
                           "--no-fuse-lfs"])
    ours = train.parse_args(["c.toml", "--lr", "1e-4", "--epochs", "2", "--warmup", "0.2", "--grad-clip", "0.5",
                             "--eval-every", "10", "--checkpoint-every", "20", "--output", "m2", "--no-fuse-lfs"])
    assert vars(hf) == vars(ours)
    assert (hf.lr, hf.epochs, hf.output, hf.fuse_lfs, hf.supervised) == (1e-4, 2, "m2", False, None)
    with pytest.raises(SystemExit):
        train.parse_args(["c.toml", "--target", "nope"])
    assert train.parse_args(["c.toml", "--max-length", "96"]).max_length == 96
    assert train.parse_args(["c.toml", "--max-length", "auto"]).max_length == "auto"
    with pytest.raises(SystemExit):
        train.parse_args(["c.toml", "--max-length", "long"])


def test_version_and_max_queries_on_every_stage(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0 and capsys.readouterr().out.strip() == f"weakrank {version('weakrank')}"
    for name, parser in subcommands().items():
        if name != "judge":  # the one sub-command that reads no pipeline config
            assert parser.parse_args(["c.toml", "--max-queries", "5"]).max_queries == 5, name


def test_quiet_leaves_stderr_empty_and_a_log_gets_lines_not_carriage_returns(tmp_path):
    import subprocess
    import sys

    cfg = str(small_config(tmp_path, lfs='["bm25", "bert_cosine"]'))  # bert_cosine: transformers' "Loading weights"

    def stderr(*args: str) -> str:
        run = subprocess.run([sys.executable, "-m", "weakrank.cli", *args], capture_output=True, check=True)
        return run.stderr.decode()

    assert stderr("run", cfg, "--stages", "ingest,label", "--quiet") == ""
    log = stderr("label", cfg, "--force")  # stderr is a pipe: lines, no transformers bar
    assert "labeling: 100%" in log and "\r" not in log and "Loading weights" not in log


def beir_folder(root):
    """A BEIR folder whose qrels list relevant passages only (as BEIR's do): 3 test queries, 8 passages."""
    (root / "qrels").mkdir(parents=True)
    texts = ["apples are sweet fruit", "pears grow on trees", "the train leaves at noon", "rain falls in spring",
             "sweet apples in the orchard", "trees lose leaves in autumn", "the station clock", "spring flowers bloom"]
    (root / "corpus.jsonl").write_text("".join(f'{{"_id": "d{i}", "text": "{t}"}}\n' for i, t in enumerate(texts)))
    queries = {"q1": "sweet apples", "q2": "trees in autumn", "q3": "spring rain"}
    (root / "queries.jsonl").write_text("".join(f'{{"_id": "{q}", "text": "{t}"}}\n' for q, t in queries.items()))
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td0\t1\nq2\td5\t1\nq3\td3\t1\n")
    return root


def test_run_evaluates_beir_qrels_as_evaluate_require_says(tmp_path, capsys):
    beir_folder(tmp_path / "beir")
    cfg = tmp_path / "beir.toml"
    base = ('[dataset]\nloader = "beir"\npath = "beir"\noptions = { k = 4, splits = ["test"] }\n'
            '[label]\nlfs = ["bm25", "tfidf"]\n[train]\n')
    cfg.write_text(base)
    assert main(["run", str(cfg), "--stages", "ingest,label,aggregate", "--quiet"]) == 0
    paths = RunPaths(tmp_path / "data" / "beir")
    candidates = pd.read_parquet(paths.dataset / "candidates.parquet")
    write_run(candidates.assign(score=-candidates["rank"].astype(float)), paths.runs / "model.trec", "model")
    capsys.readouterr()
    assert main(["run", str(cfg), "--stages", "evaluate"]) == 2  # require = "both": no query has a non-relevant one
    err = capsys.readouterr().err
    assert "require = 'both'" in err and "[evaluate] require, or --require" in err
    assert main(["run", str(cfg), "--stages", "evaluate", "--require", "relevant"]) == 0
    out = capsys.readouterr().out
    assert "n = 3 queries (with a relevant candidate)" in out
    # issue 43: the table explains itself (p-values, marks, rows) and a closing line says what happened
    assert "p MAP" in out and "† significantly better than the baseline (first stage (BM25 top 4)), ‡ significantly worse" in out
    assert "fusion-rrf, fusion-combsum: the LFs' rankings fused without labels" in out
    assert "model: the shipped ranker: the trained bi-encoder (the student) averaged per query" in out
    last = out.rstrip().splitlines()[-1]
    assert last.startswith("the shipped ranker (model): MAP ") and " vs first stage (BM25 top 4) " in last
    assert "3 queries" in last and "first stage (BM25 top 4): the candidates' own order" in out
    written = (paths.runs / "evaluation.md").read_text()
    assert "p MAP" in written and "† significantly better" in written and last.split(";")[0] in written
    assert (paths.runs / "evaluation.png").stat().st_size > 1000
    cfg.write_text(base + '[evaluate]\nrequire = "relevant"\n')
    assert main(["run", str(cfg), "--stages", "evaluate"]) == 0
    assert "n = 3 queries (with a relevant candidate)" in capsys.readouterr().out
    assert set(pd.read_csv(paths.runs / "evaluation.csv", index_col=0).index) >= {"first stage (BM25 top 4)", "bm25 (weakrank)", "tfidf", "model"}
    cfg.write_text(base + '[evaluate]\nrequire = "relevent"\n')
    assert main(["run", str(cfg), "--stages", "evaluate"]) == 2
    assert "did you mean 'relevant'" in capsys.readouterr().err


def test_help_answers_without_importing_torch_pandas_or_transformers():
    """Every ``--help`` is quick because it loads none of the heavy libraries (torch alone takes 2-5 s); asserted
    on what is imported, not on a clock, so a busy machine cannot fail it."""
    import subprocess
    import sys

    heavy = {"torch", "transformers", "pandas", "sklearn", "scipy"}
    code = ("import contextlib, io, sys; from weakrank.cli import main\n"
            "out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            "    try:\n"
            "        main(sys.argv[1:] + ['--help'])\n"
            "    except SystemExit:\n"
            "        pass\n"
            f"print(sorted({heavy!r} & set(sys.modules)))\n"
            "print(out.getvalue())")
    for command in ([], *([name] for name in subcommands())):
        imported, help_ = subprocess.run([sys.executable, "-c", code, *command], capture_output=True, text=True,
                                         check=True).stdout.split("\n", 1)
        assert imported == "[]", (command, imported)
        assert help_.startswith("usage: weakrank"), command
    train_help = " ".join(subprocess.run([sys.executable, "-m", "weakrank.cli", "train", "--help"],
                                         capture_output=True, text=True, check=True).stdout.split())
    assert "(default: \"listwise\")" in train_help and "(default: 5e-05)" in train_help


def test_quiet_silences_the_beir_loader_and_a_log_gets_no_carriage_return(tmp_path):
    import subprocess
    import sys

    beir_folder(tmp_path / "beir")
    cfg = tmp_path / "beir.toml"
    cfg.write_text('[dataset]\nloader = "beir"\npath = "beir"\noptions = { k = 4, splits = ["test"] }\n'
                   '[label]\nlfs = ["bm25", "tfidf"]\n')
    quiet = subprocess.run([sys.executable, "-m", "weakrank.cli", "ingest", str(cfg), "--quiet"], capture_output=True,
                           text=True, check=True)
    assert quiet.stderr == ""
    logged = subprocess.run([sys.executable, "-m", "weakrank.cli", "ingest", str(cfg)], capture_output=True,
                            text=True, check=True)
    assert "\r" not in logged.stderr
def test_label_model_flag_lists_every_label_model_and_a_misspelt_one_gets_a_suggestion(tmp_path, capsys):
    from weakrank.label_models import MODELS

    [flag] = [a for a in subcommands()["aggregate"]._actions if a.dest == "model"]
    assert all(name in flag.help for name in MODELS)
    assert main(["aggregate", str(small_config(tmp_path)), "--label-model", "generativ"]) == 2
    assert "did you mean 'generative'" in capsys.readouterr().err


@pytest.mark.parametrize(("change", "message"), [
    (('loader = "beir"', 'loader = "bier"'), r"\[dataset\] unknown loader 'bier' \(did you mean 'beir'\?\)"),
    (("k = 4", "kk = 4"), r"unknown option 'kk' of loader 'beir' \(did you mean 'k'\?\)"),
    (('"tfidf"]', '"tfidf", "bm52"]'), r"\[label\] unknown LF 'bm52' \(did you mean 'bm25'\?\)"),
    (('"tfidf"]', '"tfidf", "lfs/mine.py:score"]'), r"LF file .*lfs/mine.py not found"),
    (('[label]', '[analyze]\nsplits = ["tset"]\n[label]'),
     r"\[analyze\] splits unknown split 'tset' \(did you mean 'test'\?\); the dataset's splits are \['test'\]"),
    (('path = "beir"', 'path = "bier"'), r"\[dataset\] path: .*bier does not exist \(loader 'beir'\)"),
    (('splits = ["test"]', 'splits = ["test", "dev"]'), r"\[dataset\] path: file .*qrels/dev.tsv not found"),
    (('"tfidf"]', '"tfidf", "lfs/own.py:shared_word"]'),
     r"\[label\] .*lfs/own.py defines no 'shared_word' \(did you mean 'shared_words'\?\)"),
    (('"tfidf"]', '"tfidf", "lfs/broken.py:shared_words"]'),
     r"\[label\] LF '.*lfs/broken.py:shared_words': .*lfs/broken.py:4: syntax error: expected ':'"),
    (('"tfidf"]', '"tfidf", "lfs/raising.py:shared_words"]'),
     r"\[label\] LF '.*raising.py:shared_words': importing it raised ModuleNotFoundError: No module named "
     r"'not_installed' \(.*lfs/raising.py:1\)"),
])
def test_a_wrong_name_anywhere_stops_run_before_anything_is_written(tmp_path, capsys, change, message):
    beir_folder(tmp_path / "beir")
    (tmp_path / "lfs").mkdir()
    lf = "from weakrank import ranking_lf\n\n@ranking_lf()\ndef shared_words(query, passage):\n    return 1.0\n"
    (tmp_path / "lfs" / "own.py").write_text(lf)
    (tmp_path / "lfs" / "broken.py").write_text(lf.replace("passage):", "passage)"))
    (tmp_path / "lfs" / "raising.py").write_text("import not_installed\n" + lf)
    cfg = tmp_path / "beir.toml"
    cfg.write_text(('[dataset]\nloader = "beir"\npath = "beir"\noptions = { k = 4, splits = ["test"] }\n'
                    '[label]\nlfs = ["bm25", "tfidf"]\n').replace(*change))
    assert main(["run", str(cfg), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert re.search(message, err) and err.count("\n") == 1, err
    assert not (tmp_path / "data").exists()
    if "lfs/" in change[1]:  # the same check from Python: load_config reads the LFs as the command line does
        from weakrank.config import load_config

        with pytest.raises(ConfigError, match=message):
            load_config(cfg)


def test_a_bad_train_key_stops_run_without_importing_torch(tmp_path):
    """The whole config, [train] included, is checked before a stage runs and without the training code (torch
    alone takes seconds): asserted on what is imported, not on a clock."""
    import subprocess
    import sys

    beir_folder(tmp_path / "beir")
    cfg = tmp_path / "beir.toml"
    cfg.write_text('[dataset]\nloader = "beir"\npath = "beir"\noptions = { k = 4, splits = ["test"] }\n'
                   '[label]\nlfs = ["bm25", "tfidf"]\n[train]\nmax_lenght = 32\n')
    code = ("import sys; from weakrank.cli import main\n"
            "code = main(['run', sys.argv[1], '--quiet'])\n"
            "print(code, sorted({'torch', 'transformers', 'sklearn'} & set(sys.modules)))")
    run = subprocess.run([sys.executable, "-c", code, str(cfg)], capture_output=True, text=True, check=True)
    assert run.stdout == "2 []\n"
    assert "unknown [train] key 'max_lenght' (did you mean 'max_length'?)" in run.stderr
    assert not (tmp_path / "data").exists()


def test_analyze_of_a_misspelt_split_fails_and_keeps_the_previous_summary(tmp_path, capsys):
    beir_folder(tmp_path / "beir")
    cfg = tmp_path / "beir.toml"
    cfg.write_text('[dataset]\nloader = "beir"\npath = "beir"\noptions = { k = 4, splits = ["test"] }\n'
                   '[label]\nlfs = ["bm25", "tfidf"]\n')
    assert main(["run", str(cfg), "--quiet"]) == 0
    summary = tmp_path / "data" / "beir" / "analysis" / "lf_summary.csv"
    before = summary.read_bytes()
    assert "np.int64" not in before.decode() and '"[-1, 1]"' in before.decode()  # plain values
    quality = (summary.parent / "quality.md").read_text()
    assert "| bm25 " in quality and re.search(r"\|\s+3 \|\n", quality) and ".000 |\n" not in quality  # counts
    per_query = pd.read_csv(summary.parent / "quality_per_query.csv")
    assert len(per_query) == 3 * per_query["scorer"].nunique() and per_query["query_id"].nunique() == 3
    capsys.readouterr()
    assert main(["analyze", str(cfg)]) == 0
    printed = capsys.readouterr().out
    assert "== quality ==" in printed and "quality_per_query" not in printed  # the per-query rows only in the file
    assert main(["analyze", str(cfg), "--split", "tset"]) == 2
    assert "--split unknown split 'tset' (did you mean 'test'?)" in capsys.readouterr().err
    assert summary.read_bytes() == before
    from weakrank import pipeline
    from weakrank.config import load_config

    with pytest.raises(ConfigError, match=r"--split unknown split 'tset' \(did you mean 'test'\?\)"):
        pipeline.analyze(load_config(cfg), splits=["tset"])  # from Python too, with the CLI's message
    assert summary.read_bytes() == before


def test_quiet_silences_every_warning_and_without_it_a_warning_is_one_line(tmp_path, capsys):
    import subprocess
    import sys
    from pathlib import Path

    own = Path(__file__).resolve().parents[1] / "data" / "fixtures" / "own_collection"
    (tmp_path / "flat.py").write_text("from weakrank import ranking_lf\n\n@ranking_lf()\n"
                                      "def flat(query, passage):\n    return 0.0\n")  # abstains: a UserWarning
    cfg = tmp_path / "own.toml"
    cfg.write_text((own / "pipeline.toml").read_text().replace('path = "."', f'path = "{own}"')
                   .replace('"word_overlap"]', '"flat.py:flat"]'))

    def stderr(*flags: str) -> str:
        command = [sys.executable, "-m", "weakrank.cli", "run", str(cfg), "--run-dir", str(tmp_path / "run"),
                   "--stages", "ingest,label", "--force", *flags]
        return subprocess.run(command, capture_output=True, text=True, check=True).stderr

    assert stderr("--quiet") == ""
    logged = stderr()
    import os
    import warnings

    def environ() -> list[str | None]:
        return [os.environ.get(key) for key in ("PYTHONWARNINGS", "TRANSFORMERS_VERBOSITY")]

    shown, before = warnings.showwarning, environ()
    assert main(["label", str(cfg), "--run-dir", str(tmp_path / "run"), "--quiet"]) == 0
    assert warnings.showwarning is shown and environ() == before  # a command leaves its process alone
    capsys.readouterr()
    assert main(["label", str(cfg), "--run-dir", str(tmp_path / "run"), "--force"]) == 0
    assert "weakrank: warning: labeling function 'flat' abstains on every pair\n" in capsys.readouterr().err
    assert warnings.showwarning is shown
    assert "weakrank: warning: labeling function 'flat' abstains on every pair\n" in logged
    assert "UserWarning" not in logged and "apply_lfs(" not in logged  # no category, no source line


def test_loading_a_model_draws_no_loading_weights_bar():
    from transformers.utils import logging

    from weakrank.training import CrossEncoderRanker

    logging.enable_progress_bar()  # as a terminal has it
    try:
        CrossEncoderRanker.from_encoder("minilm", max_length=32)
        assert not logging.is_progress_bar_enabled()
    finally:
        logging.disable_progress_bar()


def test_run_ends_with_the_line_that_says_when_to_judge(tmp_path, capsys):
    """Issue 44: without gold, analyze reports how the fusion model's views agree and, where it cannot tell two
    apart, says so in one line with the commands that judge a few queries; `run` prints it at its end."""
    from tests.test_analysis import score_votes

    cfg = tmp_path / "views.toml"
    neutral = "".join(f'[label.options.{lf}]\nfamily = "{lf}"\nprior = 0.5\n'  # no prior tells them apart here
                      for lf in ("bm25", "embedding_cosine", "bert_cosine"))
    cfg.write_text('[dataset]\nloader = "beir"\npath = "beir"\n[label]\nlfs = ["bm25", "embedding_cosine", '
                   '"bert_cosine"]\n' + neutral)
    paths = RunPaths(tmp_path / "data" / "views")
    votes = score_votes(relevance=0.5)  # two views alike that disagree; no gold
    write_parquet(votes.assign(split="train", rank=votes.groupby("query_id").cumcount(), gold=pd.NA), paths.votes)
    paths.dataset.mkdir()  # ingested already: analyze reads only the votes
    assert main(["run", str(cfg), "--stages", "analyze", "--run-dir", str(paths.root), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "== views ==" in out and "put the same candidate first" in out  # the table and its legend
    last = out.rstrip().splitlines()[-1]
    pair = re.match(r"the label model cannot tell (\w+) and (\w+) apart: it loads them alike", last)
    assert pair, last  # which two depends on the LFs' declared priors; that they are named does not
    assert f"`weakrank select {cfg} --run-dir {paths.root} --queries 10`" in last
    judging = tmp_path / "views.judgments" / "judging.tsv"  # beside the config, outside the run directory
    assert last.endswith(f"`weakrank judge {judging}`, then `weakrank run {cfg} --run-dir {paths.root} "
                         f"--judgments {judging}`")
    views = pd.read_csv(paths.analysis / "views.csv", index_col=0)
    assert list(views.index) == ["bm25", "embedding_cosine", "bert_cosine"]
    assert f"cannot tell {pair[1]} and {pair[2]} apart" in (paths.analysis / "views.md").read_text()
