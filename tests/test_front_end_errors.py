"""``rlif.eval`` and ``rlif.report`` turn every error into one redacted line, as the Hub commands do
(``rlif.redaction.guarded``): a secret from the environment that an exception carries, in its text, a chained
cause, an httpx request's URL or an ``Authorization`` header, never reaches the terminal or the traceback file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from rlif.eval import cli as eval_cli
from rlif.report import cli as report_cli

TOKEN = "hf_SecretToken0123456789abcdef"
KEY = "sk-judge-4f9c2a7e"  # JUDGE_API_KEY: known only as the environment's value


def _chained(kind: type[Exception]) -> Callable[..., None]:
    """A stand-in for a command's work that fails with ``kind`` carrying both secrets, caused by an httpx error."""

    def fail(*_: object, **__: object) -> None:
        request = httpx.Request("GET", f"https://user:{TOKEN}@judge.example/v1", headers={"Authorization": KEY})
        try:
            raise httpx.ConnectError(f"refused {request.url} {request.headers}", request=request)
        except httpx.ConnectError as err:
            raise kind(f"judge said no to {KEY} with headers {{'authorization': 'Bearer {TOKEN}'}}") from err

    return fail


FRONT_ENDS = {
    "eval": (eval_cli, "run_score", ["score", "--responses", "r.jsonl", "--eval-file", "e.parquet", "--out", "o"]),
    "report": (report_cli, "build_report", ["runs/a", "--out", "report.html"]),
}


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setenv("JUDGE_API_KEY", KEY)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("front_end", sorted(FRONT_ENDS))
def test_an_expected_error_is_one_redacted_line(secrets, monkeypatch, capsys, front_end):
    module, target, args = FRONT_ENDS[front_end]
    monkeypatch.setattr(module, target, _chained(ValueError))
    assert module.main(args) == 2
    captured = capsys.readouterr()
    assert captured.err == "error: judge said no to <redacted> with headers {'authorization': '<redacted>'}\n"
    assert TOKEN not in captured.out + captured.err and KEY not in captured.out + captured.err
    assert list(secrets.glob("*.traceback.txt")) == []


@pytest.mark.parametrize("front_end", sorted(FRONT_ENDS))
def test_an_unexpected_error_is_one_line_naming_a_redacted_traceback(secrets, monkeypatch, capsys, front_end):
    module, target, args = FRONT_ENDS[front_end]
    monkeypatch.setattr(module, target, _chained(KeyError))
    assert module.main(args) == 1
    err = capsys.readouterr().err
    (trace,) = secrets.glob(f"rlif-{'eval-score' if front_end == 'eval' else 'report'}-*.traceback.txt")
    assert err.startswith("error: KeyError: ") and err.endswith(f"; unexpected, redacted traceback in {trace}\n")
    assert "(caused by ConnectError: refused https://<redacted>@judge.example/v1 " in err
    assert err.count("\n") == 1 and TOKEN not in err and KEY not in err
    text = trace.read_text(encoding="utf-8")
    assert "KeyError" in text and "ConnectError" in text and "Traceback" in text
    assert TOKEN not in text and KEY not in text
    assert trace.stat().st_mode & 0o077 == 0  # private to the user


def test_a_full_disk_keeps_its_advice_through_the_guard(secrets, monkeypatch, capsys):
    def full(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device", str(secrets / "o" / "metrics.json"))

    module, target, args = FRONT_ENDS["eval"]
    monkeypatch.setattr(module, target, full)
    assert module.main(args) == 1
    assert capsys.readouterr().err == (
        f"error: cannot write {secrets / 'o' / 'metrics.json'}: No space left on device; free space there or pass "
        "another --out\n"
    )
