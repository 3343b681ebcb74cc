"""The limits a worker puts on itself before its boundary: it dies with its server, its memory is
bounded, it keeps no privilege.

- PR_SET_PDEATHSIG: the kernel kills the worker when the fork server goes (the server goes when the
  runner does, however it ends), so no worker outlives its run;
- RLIMIT_AS: the worker's address space (`--method-memory`): past it an allocation fails, so the
  method meets a MemoryError (its stream's `method_error`, naming the flag) instead of the machine's OOM
  killer choosing a process; no core files;
- capabilities: a worker started by root drops every one (bounding set, ambient, effective,
  permitted), so root's privileges do not pass to a guest.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import sys

__all__ = ["confine"]

_PR_SET_PDEATHSIG, _PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 1, 24, 47, 4
_CAP_VERSION_3 = 0x20080522
_LAST_CAP = 63


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def confine(memory: int) -> None:
    """Die with the parent, bound the address space to `memory` bytes (0: no bound), drop privileges."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getppid()
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the server went before the request took hold
        os._exit(1)
    if memory > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    _drop_capabilities(libc)


def _drop_capabilities(libc: ctypes.CDLL) -> None:
    for cap in range(_LAST_CAP + 1):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL past the kernel's last one: nothing to drop
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(_CAP_VERSION_3, 0)
    data = (_CapData * 2)()
    libc.capset(ctypes.byref(header), data)
