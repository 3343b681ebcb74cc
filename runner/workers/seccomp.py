"""A seccomp filter a worker installs on itself: no network, no new process, no way around either.

Landlock (`boundary`) covers files, TCP and signals; it does not cover UDP, connecting to a unix socket
on the filesystem, or starting processes. So a worker also refuses, with EPERM, for good:
- every `socket()` (every family: UDP, raw, netlink, unix), `connect`, `bind`, `listen`, `accept`,
  and `socketpair` but for a unix stream pair (asyncio's wake-up pair): the worker's only way out is
  the socket to the runner, which it has before the filter;
- every new process: `fork`, `vfork`, `clone` without CLONE_THREAD (threads stay allowed), `clone3`
  (ENOSYS, so the C library falls back to `clone`, whose flags a filter can read), `execve` and
  `execveat` (the worker is forked from the fork server: it never needs to run a program);
- what would step around the rest: io_uring (its own socket and open calls), ptrace and
  process_vm_readv/writev, bpf, perf_event_open, userfaultfd, namespaces (unshare, setns), mounts,
  keyrings, open_by_handle_at, chroot, kernel modules, kexec, reboot.
Written as classic BPF through ctypes, for x86_64 and aarch64 (the architectures shiftbench is tested
on); elsewhere `install` returns False and the boundary's name says the filter is missing. A call made
for another architecture (x32's numbers, a 32-bit entry) is refused as a whole.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import sys

__all__ = ["install", "supported"]

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_BIT = 0x40000000

# name: (x86_64, aarch64); None where the architecture has no such call
_DENIED: dict[str, tuple[int | None, int | None]] = {
    "socket": (41, 198), "connect": (42, 203), "accept": (43, 202), "bind": (49, 200), "listen": (50, 201),
    "accept4": (288, 242), "fork": (57, None), "vfork": (58, None), "execve": (59, 221), "execveat": (322, 281),
    "ptrace": (101, 117), "process_vm_readv": (310, 270), "process_vm_writev": (311, 271), "bpf": (321, 280),
    "perf_event_open": (298, 241), "userfaultfd": (323, 282), "unshare": (272, 97), "setns": (308, 268),
    "mount": (165, 40), "umount2": (166, 39), "pivot_root": (155, 41), "chroot": (161, 51),
    "open_tree": (428, 428), "move_mount": (429, 429), "fsopen": (430, 430), "fsconfig": (431, 431),
    "fsmount": (432, 432), "fspick": (433, 433), "mount_setattr": (442, 442), "keyctl": (250, 219),
    "add_key": (248, 217), "request_key": (249, 218), "open_by_handle_at": (304, 265),
    "name_to_handle_at": (303, 264), "init_module": (175, 105), "finit_module": (313, 273),
    "delete_module": (176, 106), "kexec_load": (246, 104), "reboot": (169, 142), "pidfd_getfd": (438, 438),
    "io_uring_setup": (425, 425), "io_uring_enter": (426, 426), "io_uring_register": (427, 427),
}
_CLONE = (56, 220)
_CLONE3 = (435, 435)
_SOCKETPAIR = (53, 199)
_CLONE_THREAD = 0x00010000
_AF_UNIX, _SOCK_STREAM, _SOCK_TYPE_MASK = 1, 1, 0xF

# classic BPF
_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _AND_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x54, 0x06
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_KILL_PROCESS = 0x80000000
_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24  # offsets in struct seccomp_data (the low half of each argument)

_PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 38, 22, 2


class _Filter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class _Program(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(_Filter))]


def _arch() -> str | None:
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    return machine if sys.platform.startswith("linux") and machine in _AUDIT_ARCH else None


def supported() -> bool:
    """Whether this machine's architecture has the filter (Linux on x86_64 or aarch64)."""
    return _arch() is not None


def program(arch: str) -> list[tuple[int, int, int, int]]:
    """The filter's instructions for `arch`, as (code, jt, jf, k)."""
    column = 0 if arch == "x86_64" else 1
    deny = _ERRNO | errno.EPERM
    code: list[tuple[int, int, int, int]] = [(_LD_W_ABS, 0, 0, _ARCH), (_JEQ_K, 1, 0, _AUDIT_ARCH[arch]),
                                             (_RET_K, 0, 0, _KILL_PROCESS), (_LD_W_ABS, 0, 0, _NR)]
    if arch == "x86_64":
        code += [(_JGE_K, 0, 1, _X32_BIT), (_RET_K, 0, 0, deny)]
    for numbers in _DENIED.values():
        number = numbers[column]
        if number is not None:
            code += [(_JEQ_K, 0, 1, number), (_RET_K, 0, 0, deny)]
    code += [(_JEQ_K, 0, 1, _CLONE3[column]), (_RET_K, 0, 0, _ERRNO | errno.ENOSYS)]
    # clone: a thread (CLONE_THREAD set) goes on, anything else is a new process
    code += [(_JEQ_K, 0, 4, _CLONE[column]), (_LD_W_ABS, 0, 0, _ARG0), (_JSET_K, 1, 0, _CLONE_THREAD),
             (_RET_K, 0, 0, deny), (_RET_K, 0, 0, _ALLOW)]
    # socketpair: only AF_UNIX with SOCK_STREAM (flags such as SOCK_CLOEXEC masked off)
    code += [(_JEQ_K, 0, 6, _SOCKETPAIR[column]), (_LD_W_ABS, 0, 0, _ARG0), (_JEQ_K, 0, 3, _AF_UNIX),
             (_LD_W_ABS, 0, 0, _ARG1), (_AND_K, 0, 0, _SOCK_TYPE_MASK), (_JEQ_K, 1, 0, _SOCK_STREAM),
             (_RET_K, 0, 0, deny)]
    code += [(_RET_K, 0, 0, _ALLOW)]
    return code


def install() -> bool:
    """Install the filter on this process (and every thread it starts later); False where it cannot."""
    arch = _arch()
    if arch is None:
        return False
    instructions = program(arch)
    filters = (_Filter * len(instructions))(*(_Filter(*op) for op in instructions))
    prog = _Program(len(instructions), ctypes.cast(filters, ctypes.POINTER(_Filter)))
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return bool(libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) == 0)


def _check_jumps(code: list[tuple[int, int, int, int]]) -> None:
    """Every jump lands inside the program (a wrong offset would be refused by the kernel, or worse)."""
    for index, (op, jt, jf, _) in enumerate(code):
        if op & 0x07 == 0x05:  # a jump
            assert index + 1 + max(jt, jf) < len(code), f"jump out of the filter at {index}"


_check_jumps(program("x86_64"))
_check_jumps(program("aarch64"))
