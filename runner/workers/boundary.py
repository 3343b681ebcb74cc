"""The boundary a worker puts around itself before it imports the method's code.

The process is the first boundary: nothing of the runner's memory or frames is in reach. Where the
kernel has Landlock (Linux 5.13+; this is done with its three system calls through ctypes, so no
package is needed), the worker then restricts itself for good, before the method's code is imported:
- reads (and executes) only beneath the Python installation (prefix, base prefix, the standard
  library, site-packages), shiftbench's own packages, the method's source tree and the folders the
  user names (`--method-reads`);
- writes only beneath its scratch folder (its working directory and TMPDIR);
- no TCP connect or bind where the ABI has network rules (4+): a method's network is `setup.client`,
  so every paid call is metered;
- no signal to, and no abstract unix socket of, a process outside its domain (ABI 6+).
So a method cannot open the dataset, the journal or another stream's checkpoint. Without Landlock
(another OS, an old kernel, a seccomp filter that refuses it) the boundary is the process only, and
its name says so: `restrict` returns the name the run records for each stream.
"""

from __future__ import annotations

import ctypes
import os
import sys
import sysconfig
from collections.abc import Iterable, Sequence
from pathlib import Path

__all__ = ["PROCESS_ONLY", "landlock_abi", "read_roots", "restrict"]

PROCESS_ONLY = "process only"

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same number on every architecture
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
"""Every filesystem right each ABI knows (refer came in 2, truncate in 3, ioctl on devices in 5)."""
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1
_READ = _EXECUTE | _READ_FILE | _READ_DIR


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def landlock_abi() -> int:
    """The kernel's Landlock ABI version; 0 when it has none (or refuses it)."""
    libc = _libc()
    if libc is None:
        return 0
    version = libc.syscall(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(0, int(version))


def read_roots(reads: Iterable[str]) -> list[str]:
    """The folders a worker may read: the Python installation, shiftbench's packages, `reads`."""
    paths = sysconfig.get_paths()
    ours = [str(Path(__file__).resolve().parents[2] / top) for top in ("runner", "methods", "simulators")]
    found = [sys.prefix, sys.base_prefix, sys.exec_prefix, *(paths[k] for k in ("stdlib", "platstdlib", "purelib",
                                                                                 "platlib")),
             *ours, *reads, "/dev/null", "/dev/urandom", "/etc/localtime", "/usr/share/zoneinfo"]
    return sorted({str(Path(p).resolve()) for p in found if p and os.path.exists(p)})


def restrict(scratch: str, reads: Sequence[str]) -> str:
    """Restrict this process for good (reads beneath `read_roots(reads)`, writes beneath `scratch`,
    no TCP); the name of the boundary it now runs under."""
    abi = landlock_abi()
    libc = _libc()
    if abi <= 0 or libc is None:
        return PROCESS_ONLY
    fs = _FS_BY_ABI.get(abi, _FS_BY_ABI[5])
    attr = _RulesetAttr(fs, _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0,
                        _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL if abi >= 6 else 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return PROCESS_ONLY
    try:
        for root in read_roots(reads):
            _allow(libc, int(ruleset), root, _READ if os.path.isdir(root) else _file_rights(root))
        _allow(libc, int(ruleset), scratch, fs)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_RESTRICT_SELF, int(ruleset), 0) != 0:
            return PROCESS_ONLY
    finally:
        os.close(int(ruleset))
    network = ", no TCP" if abi >= 4 else ""
    return f"landlock ABI {abi} (reads: Python, shiftbench, {len(reads)} method folders; writes: scratch{network})"


def _file_rights(path: str) -> int:
    return _READ_FILE | _WRITE_FILE if path == os.devnull else _READ_FILE


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, access: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # gone since it was listed: nothing to allow
    try:
        rule = _PathBeneath(access, fd)
        libc.syscall(_ADD_RULE, ruleset, _RULE_PATH_BENEATH, ctypes.byref(rule), 0)
    finally:
        os.close(fd)
