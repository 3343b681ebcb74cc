"""The boundary a worker puts around itself before it imports the method's code.

The process is the first boundary: nothing of the runner's memory, frames or environment is in reach
(the fork server it comes from was started with the worker environment only). Where the kernel has
Landlock (Linux 5.13+; its three system calls through ctypes, so no package is needed), the worker then
restricts itself for good:
- reads only the Python installation (the standard library, site-packages, the system's shared
  libraries), each entry but shiftbench's own packages, which the worker has loaded already (the method
  face, `methods.face`) and which a method must not read (the generators would give it the labels);
  the method's own file (or its package) and the folders the user names (`--method-reads`);
- writes only beneath its scratch folder (its working directory, HOME and TMPDIR);
- no TCP connect or bind where the ABI has network rules (4+);
- no signal to, and no abstract unix socket of, a process outside its domain (ABI 6+).
Then a seccomp filter (`seccomp`) refuses every socket but the one to the runner (UDP, DNS, a unix
socket on disk), every new process, and what would step around both. Without Landlock (another OS, an
old kernel) the boundary is the process and the filter only, and its name says so: `restrict`
returns the name the run records for each stream.
"""

from __future__ import annotations

import ctypes
import os
import sys
import sysconfig
from collections.abc import Iterable, Sequence
from pathlib import Path

from methods.face import TOPS
from runner.workers import seccomp

__all__ = ["PROCESS_ONLY", "forbidden", "landlock_abi", "read_rules", "restrict"]

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
_SYSTEM_LIBRARIES = ("/lib", "/lib64", "/usr/lib", "/usr/lib64")
_FILES = ("/dev/null", "/dev/urandom", "/dev/random", "/etc/localtime", "/etc/ld.so.cache", "/usr/share/zoneinfo")


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


def _python_roots() -> list[str]:
    paths = sysconfig.get_paths()
    found = [paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")]
    found += [p for p in sys.path if p and "-packages" in p]
    return [p for p in found if p and os.path.isdir(p)]


def forbidden() -> set[Path]:
    """What no worker may read: shiftbench's own packages, wherever they are installed (the checkout
    they were imported from, a copy in site-packages)."""
    here = Path(__file__).resolve().parents[2]
    found = {here / top for top in TOPS}
    for root in _python_roots():
        found |= {Path(root, top).resolve() for top in TOPS if Path(root, top).is_dir()}
    return found


def read_rules(reads: Iterable[str]) -> list[str]:
    """The paths a worker may read, each a rule: the Python installation and the system's libraries
    entry by entry around what is `forbidden`, the files every process reads, and `reads` as given."""
    deny = forbidden()
    rules: set[str] = set()
    for root in {*_python_roots(), *_SYSTEM_LIBRARIES}:
        if os.path.isdir(root):
            _around(Path(root).resolve(), deny, rules)
    rules |= {str(Path(p).resolve()) for p in (*_FILES, *reads) if os.path.exists(p)}
    return sorted(rules)


def _around(root: Path, deny: set[Path], rules: set[str]) -> None:
    """`root` as one rule, or, where something forbidden lies beneath it, its entries one by one."""
    if root in deny:
        return
    if not any(d.is_relative_to(root) for d in deny):
        rules.add(str(root))
        return
    try:
        entries = list(root.iterdir())
    except OSError:
        return
    for entry in entries:
        resolved = entry.resolve()
        if resolved.is_dir() and not entry.is_symlink():
            _around(resolved, deny, rules)
        elif not any(resolved.is_relative_to(d) for d in deny):
            rules.add(str(resolved))


def restrict(scratch: str, reads: Sequence[str]) -> str:
    """Restrict this process for good (reads `read_rules(reads)`, writes beneath `scratch`, no TCP, then
    the seccomp filter); the name of the boundary it now runs under."""
    filtered = ", no sockets or processes (seccomp)"
    landlock = _landlock(scratch, reads)
    if not seccomp.install():
        filtered = ", no seccomp filter on this architecture"
    return (landlock or PROCESS_ONLY) + filtered


def _landlock(scratch: str, reads: Sequence[str]) -> str:
    abi = landlock_abi()
    libc = _libc()
    if abi <= 0 or libc is None:
        return ""
    fs = _FS_BY_ABI.get(abi, _FS_BY_ABI[5])
    attr = _RulesetAttr(fs, _NET_BIND_TCP | _NET_CONNECT_TCP if abi >= 4 else 0,
                        _SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL if abi >= 6 else 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if ruleset < 0:
        return ""
    try:
        for path in read_rules(reads):
            _allow(libc, int(ruleset), path, _READ if os.path.isdir(path) else _file_rights(path))
        _allow(libc, int(ruleset), scratch, fs)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_RESTRICT_SELF, int(ruleset), 0) != 0:
            return ""
    finally:
        os.close(int(ruleset))
    network = ", no TCP" if abi >= 4 else ""
    return (f"landlock ABI {abi} (reads: Python, the method face loaded, {len(reads)} method paths; writes: "
            f"scratch{network})")


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
