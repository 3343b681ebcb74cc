"""A run's lease: which host and process write it now, renewed by that process while it runs.

A process id says whether a run is still being written only on the machine that wrote it; a shard on a
cluster may be continued, or merged, from another node. So the process that drives a run holds a lease
in the journal's meta table (`lease:<run id>`: host, PID, when it was last renewed and for how long it
holds) and renews it well before it lapses; "still running" means a live lease. A lease whose holder
died lapses by itself, and its run may then be taken over on any host; on its own host a holder seen
gone frees it at once. "Its own host" is more than a hostname: two machines, or two containers, may share
one (`debian`, `localhost`), and a PID means nothing outside its PID namespace; so a lease also names its
holder's process space (the kernel's boot id and the PID namespace), and only a lease of this hostname
*and* this process space is judged by its PID. Lease rows are swapped, never blindly written
(`Batch.lease_swap`): of two processes taking one run at the same moment, exactly one finds its own lease
there afterwards. `live_writer` says who may still be writing a run, for every reader that asks
(`resume`, a shard's start, `journal merge`, `runs`, `runs rm`, `journal vacuum`).
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import orjson

from runner.common.liveness import process_alive

__all__ = ["LEASE_PREFIX", "Lease", "clock", "lease_meta_key", "live_writer", "process_space", "this_host"]

LEASE_PREFIX = "lease:"


def lease_meta_key(run_id: str) -> str:
    return f"{LEASE_PREFIX}{run_id}"


@cache
def process_space() -> str:
    """This process's kernel boot and PID namespace: equal for two processes exactly when each can see
    the other's PID. "" where Linux's /proc does not say (a PID is then judged by the hostname alone)."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        return f"{boot}/{os.readlink('/proc/self/ns/pid')}"
    except OSError:
        return ""


@dataclass(frozen=True)
class Lease:
    host: str
    pid: int
    renewed_at: float
    """The holder's wall clock when it last renewed (hosts' clocks are assumed to agree within seconds)."""
    ttl_s: float
    released: bool = False
    """Given up by its holder when its run ended (the run is free at once, on any host)."""
    space: str = field(default_factory=process_space)
    """Where its PID means something (`process_space`); "" in a lease from before it was recorded."""

    @property
    def expires_at(self) -> float:
        return self.renewed_at + self.ttl_s

    def live_at(self, now: float) -> bool:
        return not self.released and now < self.expires_at

    def renewed(self, now: float) -> Lease:
        return replace(self, renewed_at=now)

    def given_up(self, now: float) -> Lease:
        return replace(self, renewed_at=now, released=True)

    def same_holder(self, other: Lease) -> bool:
        return (self.host, self.pid, self.space) == (other.host, other.pid, other.space)

    def to_json(self) -> str:
        return orjson.dumps(asdict(self)).decode()

    @classmethod
    def from_json(cls, text: str | None) -> Lease | None:
        """None for no lease, or for a row this version cannot read (it then holds nothing)."""
        if text is None:
            return None
        try:
            raw: dict[str, Any] = orjson.loads(text)
            return cls(str(raw["host"]), int(raw["pid"]), float(raw["renewed_at"]), float(raw["ttl_s"]),
                       bool(raw.get("released", False)), str(raw.get("space", "")))
        except (ValueError, TypeError, KeyError):
            return None


def this_host() -> str:
    return socket.gethostname()


def _here(lease: Lease) -> bool:
    """Is the lease's PID one this process can look up? Its hostname and, when both are known, its space."""
    return lease.host == this_host() and (not lease.space or not process_space() or lease.space == process_space())


def live_writer(status_live: bool, pid: int, host: str, lease_text: str | None, now: float,
                own_pid: int = 0) -> str | None:
    """Who may still be writing a run, in words; None: nobody. Its lease decides: none once given up or
    lapsed, or (on this host) once its process is gone. A run journaled before leases existed is judged
    by its status and PID (`host`: where it last ran, when known), which only the host that ran it can.
    `own_pid`: the caller's process, which is no other writer (a resume in the process that ran it)."""
    lease = Lease.from_json(lease_text)
    if lease is None:
        if not status_live:
            return None
        if host and host != this_host():
            return f"process {pid} on host {host} (journaled before leases; from here there is no telling)"
        return f"process {pid} on this host" if process_alive(pid) and pid != own_pid else None
    if not lease.live_at(now):
        return None
    if _here(lease):
        alive = process_alive(lease.pid) and lease.pid != own_pid
        return f"process {lease.pid} on this host ({lease.host})" if alive else None
    namesake = "another machine or container of this one's name; " if lease.host == this_host() else ""
    return (f"process {lease.pid} on host {lease.host} ({namesake}its lease was renewed "
            f"{max(0.0, now - lease.renewed_at):.0f} s ago and lapses at {clock(lease.expires_at)} unless renewed)")


def clock(at: float) -> str:
    return time.strftime("%H:%M:%S UTC", time.gmtime(at))
