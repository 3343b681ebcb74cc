"""A run's lease across hosts: swapped, never blindly written; renewed, and a holder that finds it taken
stops in one line; and two copies of one shard on two "hosts" (real processes in two UTS and network
namespaces, each its own hostname, the same files): the second refused naming the first's host and PID,
the first's host killed, its shard merged once its lease lapsed, then finished from the other host."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import orjson
import pytest

from runner.journal import Batch, open_journal
from runner.journal.lease import Lease, lease_meta_key
from runner.schedule.lease_keeper import LEASE_ENV, lease_ttl_s, take_lease
from simulators.errors import ShiftbenchInputError
from tests.runner.shards.processes import (
    PROCESS_TIMEOUT_S,
    committed,
    finish,
    freeze_after,
    kill,
    only_run,
    shiftbench,
    start,
)
from tests.runner.shards.test_merge import edited

RUN = "sw-test-shard0of2"


async def test_of_two_swaps_from_the_same_state_exactly_one_lands(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    a, b = Lease("host-a", 11, 1000.0, 60.0), Lease("host-b", 22, 1000.5, 60.0)
    key = lease_meta_key(RUN)
    async with open_journal(path) as first, open_journal(path) as second:
        # both read "no lease" and swap: the second changes nothing
        await first.commit(Batch().lease_swap(key, a.to_json(), None))
        await second.commit(Batch().lease_swap(key, b.to_json(), None))
        assert Lease.from_json(await second.read.meta(key)) == a
        # both read a's lease and renew or take it: only the first swap from that state lands
        renewed = a.renewed(1010.0)
        await first.commit(Batch().lease_swap(key, renewed.to_json(), a.to_json()))
        await second.commit(Batch().lease_swap(key, b.to_json(), a.to_json()))
        assert Lease.from_json(await first.read.meta(key)) == renewed


async def test_a_live_lease_of_another_host_refuses_and_a_lapsed_one_is_taken(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LEASE_ENV, "30")
    path = tmp_path / "journal.sqlite"
    key = lease_meta_key(RUN)
    async with open_journal(path) as journal:
        await journal.commit(Batch().set_meta(key, Lease("host-a", 4242, time.time() - 2, 60.0).to_json()))
        with pytest.raises(ShiftbenchInputError, match=r"written by process 4242 on host host-a \(its lease was "
                                                       r"renewed 2 s ago and lapses at \d\d:\d\d:\d\d UTC"):
            await take_lease(journal, RUN)
        lapsed = Lease("host-a", 4242, time.time() - 61, 60.0)
        await journal.commit(Batch().set_meta(key, lapsed.to_json()))
        keeper = await take_lease(journal, RUN)
        held = Lease.from_json(await journal.read.meta(key))
        assert held == keeper.held and held is not None
        assert (held.host, held.pid, held.ttl_s) == (socket.gethostname(), os.getpid(), 30.0)


async def test_a_holder_that_finds_its_lease_taken_stops_in_one_line_and_writes_nothing_more(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LEASE_ENV, "0.5")
    path = tmp_path / "journal.sqlite"
    key = lease_meta_key(RUN)
    async with open_journal(path) as journal:
        keeper = await take_lease(journal, RUN)
        before = keeper.held
        # this process was frozen past its lease; host-b took the run over meanwhile
        thief = Lease("host-b", 777, time.time(), 60.0)
        await journal.commit(Batch().set_meta(key, thief.to_json()))
        with pytest.raises(ShiftbenchInputError, match="process 777 on host host-b took this run over") as stopped:
            await keeper.renew_forever()
        assert "\n" not in str(stopped.value)
        assert keeper.lost == thief and keeper.held == before
        await keeper.give_up()  # a lost lease is not given up: host-b's stays
        assert Lease.from_json(await journal.read.meta(key)) == thief
        assert isinstance(await keeper.explain(RuntimeError("a row clash")), ShiftbenchInputError)


def test_the_lease_time_is_checked_where_it_enters() -> None:
    assert lease_ttl_s({}) == 60.0 and lease_ttl_s({LEASE_ENV: "2.5"}) == 2.5
    for bad in ("0", "-1", "soon", "1e9"):
        with pytest.raises(ShiftbenchInputError, match=f"{LEASE_ENV}: how long"):
            lease_ttl_s({LEASE_ENV: bad})


# ------------------------------------------------------------------------------------------ two real hosts

LEASE_S = 20.0
"""Long enough for the second copy to start while host-a's lease holds, however loaded the machine."""


def _on_host(host: str, command: list[str]) -> list[str]:
    """`command` in new UTS and network namespaces named `host`: another machine as far as the shard can
    tell (its own hostname, no network; the same files, as a cluster's shared filesystem)."""
    return ["unshare", "--uts", "--net", "sh", "-c", f'hostname {host} && exec "$@"', "sh", *command]


def _namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    done = subprocess.run(_on_host("probe-host", ["hostname"]), capture_output=True, text=True, timeout=60)
    return done.returncode == 0 and done.stdout.strip() == "probe-host"


def _lease_of(journal: Path) -> Lease | None:
    with edited(journal) as db:
        rows = db.execute("SELECT value FROM meta WHERE key LIKE 'lease:%'").fetchall()
    return Lease.from_json(rows[0][0]) if rows else None


@pytest.mark.slow
def test_two_copies_of_a_shard_on_two_hosts(built_suite: Path, tmp_path: Path) -> None:
    if not _namespaces_work():
        pytest.skip("needs unshare --uts --net (root, or user namespaces) to run a second host")
    journals = tmp_path / "journals"
    journals.mkdir()
    flags = ["--dataset", str(built_suite), "--models", "scripted", "--methods", "tabular,rag",
             "--scenarios", "retail_l1,banking_l1,pitch_l1", "--pilot", "6", "--display", "none",
             "--shard", "0/2", "--journal", str(journals / "shard-{shard}.sqlite")]
    journal = journals / "shard-0.sqlite"
    env = {LEASE_ENV: str(LEASE_S)}
    first = start(_on_host("host-a", shiftbench("run", *flags)), tmp_path / "host-a.log", env)
    # frozen mid-work (so it cannot finish first), its lease renewed within the last LEASE_S / 4
    assert freeze_after(first, journal, 3), "host-a's shard ended before 3 episodes"
    second = subprocess.run(_on_host("host-b", shiftbench("run", *flags)), capture_output=True, text=True,
                            timeout=PROCESS_TIMEOUT_S, env={**os.environ, **env})
    assert second.returncode == 2 and second.stderr.count("\n") == 1, second.stderr
    assert f"process {first.pid} on host host-a" in second.stderr, second.stderr
    kill(first)  # host-a dies: nothing ends its run, its lease stops being renewed
    at_kill = committed(journal)
    merge = ["journal", "merge", "--allow-partial", str(tmp_path / "partial.sqlite"), str(journal)]
    lease = _lease_of(journal)
    assert lease is not None and lease.host == "host-a" and not lease.released
    early = subprocess.run(_on_host("host-b", shiftbench(*merge)), capture_output=True, text=True,
                           timeout=PROCESS_TIMEOUT_S)
    if time.time() < lease.expires_at:  # asked while the lease still held (the normal case): refused
        assert early.returncode == 2 and "on host host-a" in early.stderr, early.stderr
    time.sleep(max(0.0, lease.expires_at - time.time()) + 0.5)
    partial = subprocess.run(_on_host("host-b", shiftbench(*merge)), capture_output=True, text=True,
                             timeout=PROCESS_TIMEOUT_S)
    assert partial.returncode == 0, partial.stderr
    assert "shard 0/2 had not finished" in partial.stdout
    resumed = start(_on_host("host-b", shiftbench("run", *flags)), tmp_path / "host-b.log", env)
    assert finish([resumed]) == [0], (tmp_path / "host-b.log").read_text()
    assert "continues run" in (tmp_path / "host-b.log").read_text()
    lease = _lease_of(journal)
    assert lease is not None and lease.host == "host-b" and lease.released
    other = subprocess.run(shiftbench("run", *flags[:-4], "--shard", "1/2", "--journal", str(journals / "s1.sqlite")),
                           capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S)
    assert other.returncode == 0, other.stderr
    merged = tmp_path / "merged.sqlite"
    whole = subprocess.run(shiftbench("journal", "merge", str(merged), str(journal), str(journals / "s1.sqlite")),
                           capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S)
    assert whole.returncode == 0, whole.stderr
    report = orjson.loads(subprocess.run(shiftbench("report", only_run(merged), "--json", "--journal", str(merged)),
                                         capture_output=True, text=True, timeout=PROCESS_TIMEOUT_S).stdout)
    assert report["status"] == "completed"
    print(f"\ntwo hosts: host-b refused ({second.stderr.strip()}); host-a killed at {at_kill} episodes; merged "
          f"--allow-partial after its {LEASE_S:g} s lease lapsed; resumed on host-b; whole merge completed")
