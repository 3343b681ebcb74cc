"""The runner's end of a worker's socket (`runner.workers.frame_link`), against a real socketpair: frames
arrive whole whatever the chunks, a flooding peer is held back by the kernel (reading pauses while more
than `HOLD_BYTES` of frames wait unread), and a frame too long or not JSON, or the peer's end, is said once, after every
frame that came before it."""

from __future__ import annotations

import asyncio
import socket
import struct
import threading

import anyio
import orjson
import pytest

from runner.workers.frame_link import HOLD_BYTES, FrameLink, open_link
from runner.workers.wire import MAX_FRAME, FrameError, encode


async def linked() -> tuple[FrameLink, socket.socket]:
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    return await open_link(ours), theirs


async def test_frames_split_into_single_bytes_arrive_whole_and_in_order() -> None:
    link, peer = await linked()
    wire = b"".join(encode({"n": n, "pad": "x" * n}) for n in range(40))

    def dribble() -> None:  # a byte per send from a thread: blocks whenever the runner holds reading back
        for i in range(len(wire)):
            peer.send(wire[i:i + 1])
        peer.close()

    sender = threading.Thread(target=dribble)
    sender.start()
    assert [(await link.receive())["n"] for _ in range(40)] == list(range(40))
    with pytest.raises(anyio.EndOfStream):
        await link.receive()
    await anyio.to_thread.run_sync(sender.join)
    await link.aclose()


async def test_a_flooding_peer_is_held_back_by_the_kernel_not_buffered_by_the_runner() -> None:
    link, peer = await linked()
    peer.setblocking(False)
    frame = encode({"flood": "y" * 1000})
    sent = 0
    for _ in range(20):  # give the loop many chances to read: it must stop once enough waits unread
        try:
            while sent < 50_000_000:
                sent += peer.send(frame)
        except BlockingIOError:
            pass
        await asyncio.sleep(0.01)
    assert sent < 50_000_000  # the peer was stopped by a full socket, not by us
    queued = len(link._frames)
    assert HOLD_BYTES < queued * len(frame) <= HOLD_BYTES + 256 * 1024  # the hold and one read past it, never the flood
    assert (await link.receive())["flood"] == "y" * 1000  # and reading goes on once it is asked
    await link.aclose()
    peer.close()


@pytest.mark.parametrize(("bad", "said"), [
    (struct.pack(">I", MAX_FRAME + 1), "limit"),  # a header announcing more than a frame may hold
    (struct.pack(">I", 9) + b"{not json", "not JSON"),
])
async def test_a_bad_frame_ends_the_link_after_the_frames_before_it(bad: bytes, said: str) -> None:
    link, peer = await linked()
    peer.sendall(encode({"first": 1}) + bad)
    assert await link.receive() == {"first": 1}
    with pytest.raises(FrameError, match=said):
        await link.receive()
    await link.aclose()
    peer.close()


async def test_sent_frames_reach_the_peer_whole_and_a_closed_link_refuses_to_send() -> None:
    link, peer = await linked()
    big = {"state": "z" * 3_000_000}  # past the transport's high-water mark: send waits for the peer
    reader = asyncio.get_running_loop().run_in_executor(None, _read_frame, peer)
    await link.send(big)
    assert await reader == big
    await link.aclose()
    with pytest.raises(anyio.ClosedResourceError):
        await link.send({"late": True})
    peer.close()


def _read_frame(sock: socket.socket) -> object:
    def exactly(count: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < count:
            chunks += sock.recv(count - len(chunks))
        return bytes(chunks)

    (length,) = struct.unpack(">I", exactly(4))
    return orjson.loads(exactly(length))
