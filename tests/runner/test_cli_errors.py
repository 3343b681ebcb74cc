"""Bad input: one clear line on stderr naming the file or flag, exit code 2, nothing written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runner.cli import main


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("shiftbench: error: ")
    return err[0]


@pytest.mark.parametrize(("argv", "expected"), [
    (["run", "--methods", "blnd"], "--methods: unknown method 'blnd' (did you mean 'blind'?)"),
    (["run", "--scenarios", "retail_l7"], "unknown scenario 'retail_l7'"),
    (["run", "--models", "gpt:x"], "--models: unknown model kind 'gpt' in 'gpt:x'"),
    (["run", "--models", "openai:gpt-x"], "'openai:gpt-x' needs its API key in the environment variable OPENAI_API"),
    (["run", "--models", "openai-compatible:llama"], "needs a base URL: openai-compatible:<model>@http://host:port/v1"),
    (["run", "--models", "scripted:psychic"], "unknown scripted model 'scripted:psychic'"),
    (["run", "--block-size", "0"], "block_size must be between 1 and 100000, got 0"),
])
def test_bad_flags(argv: list[str], expected: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    journal = tmp_path / "j.sqlite"
    assert main([*argv, "--journal", str(journal), "--display", "none"]) == 2
    assert expected in one_error_line(capsys)
    assert not journal.exists()


def test_missing_dataset(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.sqlite"
    code = main(["run", "--dataset", str(tmp_path / "nowhere"), "--scenarios", "retail_l1",
                 "--journal", str(journal), "--display", "none"])
    assert code == 2
    assert "nowhere: not a dataset directory" in one_error_line(capsys)
    assert not journal.exists()


def test_sweep_file_typo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sweep = tmp_path / "sweep.toml"
    sweep.write_text('methods = ["blind"]\nblock_sise = 12\n')
    assert main(["run", "--config", str(sweep), "--journal", str(tmp_path / "j.sqlite")]) == 2
    assert f"{sweep}: unknown key 'block_sise' (did you mean 'block_size'?)" in one_error_line(capsys)


def test_unreadable_journal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.sqlite"
    journal.write_bytes(b"\x00garbage" * 512)
    assert main(["runs", "--journal", str(journal)]) == 2
    assert "j.sqlite: not a shiftbench journal (file is not a database)" in one_error_line(capsys)
    assert journal.read_bytes() == b"\x00garbage" * 512
    assert main(["resume", "r-nope", "--journal", str(tmp_path / "absent.sqlite")]) == 2
    assert "no journal here" in one_error_line(capsys)
    assert not (tmp_path / "absent.sqlite").exists()


def test_unpriced_model_is_refused_before_any_request(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "sk-test-not-a-real-key")
    # Port 9 (discard) on loopback: had a request been sent, it would have failed as unreachable instead.
    code = main(["run", "--models", "openai-compatible:mystery@http://127.0.0.1:9/v1", "--journal",
                 str(tmp_path / "j.sqlite"), "--display", "none"])
    assert code == 2
    line = one_error_line(capsys)
    assert "no price known for openai-compatible:mystery@http://127.0.0.1:9/v1" in line and "--allow-unpriced" in line
    assert "sk-test-not-a-real-key" not in line


@pytest.mark.parametrize(("argv", "expected"), [
    (["run", "--modles", "scripted"], "shiftbench run: unrecognized argument --modles (did you mean --models?)"),
    (["run", "--max-turn", "3"], "shiftbench run: unrecognized argument --max-turn (did you mean --max-turns?)"),
    (["report", "r1", "--cvs"], "shiftbench report: unrecognized argument --cvs (did you mean --csv?)"),
    (["data", "build", "--sed", "3"], "shiftbench data build: unrecognized argument --sed (did you mean --seed?)"),
    (["runs", "--frobnicate"], "shiftbench runs: unrecognized argument --frobnicate; `shiftbench runs --help`"),
    (["run", "--block-size", "twelve"], "shiftbench run: argument --block-size: invalid int value: 'twelve'"),
    (["rnu"], "invalid choice: 'rnu'"),
])
def test_a_flag_typo_names_the_flag_it_meant(argv: list[str], expected: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert expected in one_error_line(capsys)


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("shiftbench 0.")


OFFICIAL = Path(__file__).resolve().parents[1] / "fixtures" / "official"


@pytest.mark.parametrize("model", ["scripted", "scripted:oracle"])
def test_scripted_oracle_on_prose_bulletins_is_refused(model: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The export's bulletins are prose: the scripted oracle would score exactly as blind."""
    journal = tmp_path / "j.sqlite"
    code = main(["run", "--dataset", str(OFFICIAL), "--models", model, "--methods", "blind,oracle",
                 "--journal", str(journal), "--display", "none"])
    assert code == 2
    line = one_error_line(capsys)
    assert f"method oracle with model {model}: the bulletins of retail_l1" in line
    assert "no machine-readable policy block" in line
    assert not journal.exists()


def test_a_dataset_with_fewer_scenarios_runs_those_it_has(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    some = tmp_path / "some"
    for name in ("banking_l2", "pitch_l1"):
        for top in ("data", "environments"):
            shutil.copytree(OFFICIAL / top / name, some / top / name)
    journal = tmp_path / "j.sqlite"
    code = main(["run", "--dataset", str(some), "--models", "scripted:docs", "--methods", "blind",
                 "--journal", str(journal), "--display", "none"])
    assert code == 0
    out = capsys.readouterr().out
    assert "banking_l2" in out and "pitch_l1" in out and "retail_l1" not in out
