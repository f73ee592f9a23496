"""torch inside rooflab's harness: a launch on CuPy's current stream, CuPy arrays as tensors.

The harness times on CuPy's current stream and runs concurrent replicas on CuPy streams of their own;
torch launches on its current stream. So a launch makes torch's current stream the CuPy stream
(torch.cuda.ExternalStream on the same handle; CuPy's null stream is torch's default stream, the
legacy default stream of both), and arrays go over with DLPack (no copies).
"""

from __future__ import annotations

import contextlib


class CupyStreams:
    """torch's view of CuPy's current stream, one torch stream object per CuPy stream handle."""

    def __init__(self, torch, cp):
        self.torch, self.cp = torch, cp
        self.device = cp.cuda.Device().id
        self._streams: dict[int, object] = {}

    def _stream(self, ptr: int):
        s = self._streams.get(ptr)
        if s is None:
            t = self.torch
            s = t.cuda.default_stream(self.device) if ptr == 0 else t.cuda.ExternalStream(ptr, device=self.device)
            self._streams[ptr] = s
        return s

    def current(self):
        """A context in which torch launches on CuPy's current stream, on CuPy's current device."""
        stack = contextlib.ExitStack()
        stack.enter_context(self.torch.cuda.device(self.device))
        stack.enter_context(self.torch.cuda.stream(self._stream(self.cp.cuda.get_current_stream().ptr)))
        return stack
