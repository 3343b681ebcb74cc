"""Method workers: a user's method run as a guest, in a process of its own, behind a boundary.

- `wire`: the frames (orjson, length-prefixed) and the protocol values they carry;
- `child`: the worker process itself (builds the method inside its boundary, answers requests, sends
  the method's model calls back to the runner);
- `process`: the runner's side of one worker (start, request with a time limit, proxied calls, end);
- `handle`: a method instance as the engine drives it, in a worker or in the runner's process;
- `failure`: a method's failure as its author reads it (the call, their own frame, the exception);
- `boundary`: what the worker restricts itself to before it imports the method's code.

Arrows: none. It imports methods and simulators only; the engine (`schedule`) holds the handles.
"""
