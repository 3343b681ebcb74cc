"""`shiftbench data fetch` against a real loopback HTTP server serving an archive the test builds."""

from __future__ import annotations

import io
import shutil
import tarfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from runner.cli import main
from runner.datasets import official
from simulators.dataset import fingerprint

OFFICIAL = Path(__file__).resolve().parents[1] / "fixtures" / "official"
COMMIT = official.PINNED_COMMIT


def archive_of(root: Path, tamper: bool = False, extra: tarfile.TarInfo | None = None) -> bytes:
    """A source archive shaped like GitHub's: one top folder holding the repository, dataset/ inside."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        readme = tarfile.TarInfo(f"ServeLearnBench-{COMMIT}/README.md")
        readme.size = 7
        tar.addfile(readme, io.BytesIO(b"# repo\n"))
        for path in sorted(root.rglob("*")):
            if path.is_file():
                data = path.read_bytes()
                if tamper and path.name == "policy.md" and "banking_l2" in path.parts:
                    data = data.replace(b"$4200.00", b"$9200.00")
                info = tarfile.TarInfo(f"ServeLearnBench-{COMMIT}/dataset/{path.relative_to(root).as_posix()}")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
        if extra is not None:
            tar.addfile(extra, io.BytesIO(b""))
    return buffer.getvalue()


class Served:
    def __init__(self) -> None:
        self.body = b""
        self.paths: list[str] = []


@pytest.fixture
def server() -> Iterator[tuple[str, Served]]:
    served = Served()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            served.paths.append(self.path)
            self.send_response(200)
            self.send_header("Content-Length", str(len(served.body)))
            self.end_headers()
            self.wfile.write(served.body)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/{{repo}}/{{commit}}.tar.gz", served
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=10)


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> str:
    """The fixtures' fingerprint recorded for the pinned commit, as a maintainer would record the real one."""
    expected = fingerprint(OFFICIAL)
    monkeypatch.setattr(official, "KNOWN_FINGERPRINTS", {COMMIT: expected})
    return expected


def test_fetch_verifies_and_writes_the_export(server: tuple[str, Served], recorded: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    url, served = server
    served.body = archive_of(OFFICIAL)
    target = tmp_path / "official"
    assert main(["data", "fetch", "--to", str(target), "--url", url]) == 0
    assert served.paths == [f"/{official.OFFICIAL_REPOSITORY}/{COMMIT}.tar.gz"]
    assert fingerprint(target) == recorded and (target / "data" / "banking_l2" / "serving.jsonl").is_file()
    assert f"fingerprint {recorded}" in capsys.readouterr().out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["official"]


def test_a_tampered_archive_is_refused_and_nothing_is_written(server: tuple[str, Served], recorded: str,
                                                              tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    url, served = server
    served.body = archive_of(OFFICIAL, tamper=True)
    target = tmp_path / "official"
    assert main(["data", "fetch", "--to", str(target), "--url", url]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "tampered" in error and recorded in error
    assert list(tmp_path.iterdir()) == []


def test_another_ref_is_checked_but_not_compared(server: tuple[str, Served], recorded: str, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    url, served = server
    served.body = archive_of(OFFICIAL, tamper=True)
    assert main(["data", "fetch", "--to", str(tmp_path / "d"), "--url", url, "--ref", "abc123"]) == 0
    assert served.paths == [f"/{official.OFFICIAL_REPOSITORY}/abc123.tar.gz"]
    assert "No fingerprint is recorded for commit abc123" in capsys.readouterr().out


def test_an_archive_that_fails_the_gold_check_is_refused(server: tuple[str, Served], tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(OFFICIAL, broken)
    world = broken / "environments" / "banking_l2" / "world.json"
    world.write_text(world.read_text().replace('"PAY-519"', '"PAY-999"', 1))
    url, served = server
    served.body = archive_of(broken)
    assert main(["data", "fetch", "--to", str(tmp_path / "out"), "--url", url]) == 2
    assert "fails `data check --gold`" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_link_inside_the_archive_is_refused(server: tuple[str, Served], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    link = tarfile.TarInfo(f"ServeLearnBench-{COMMIT}/dataset/data/evil")
    link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
    url, served = server
    served.body = archive_of(OFFICIAL, extra=link)
    assert main(["data", "fetch", "--to", str(tmp_path / "out"), "--url", url]) == 2
    assert "not a regular file" in capsys.readouterr().err
