"""NCCL's send and receive through ctypes, for the Ulysses example's comparison: one
communicator per rank from ncclCommInitAll (one process, one GPU per rank: NCCL refuses two
ranks on one GPU), and per rank one group of sends and receives on the rank's stream, from the
rank's own thread. Standard library only; the library is loaded by path (libnccl.so.2 from the
loader's path by default, then the one PyTorch's nvidia-nccl wheel carries)."""

import ctypes
import os
import threading

NCCL_BFLOAT16 = 9  # ncclBfloat16 in nccl.h, since NCCL 2.10.
NCCL_LEAST_VERSION = 21000  # 2.10: bfloat16.


class NcclError(RuntimeError):
    """NCCL cannot be loaded or refused a call; the message says which and why."""


def load_nccl(path=None):
    """The NCCL library at `path`, or the first of libnccl.so.2 and PyTorch's wheel's that
    loads; NcclError listing what was tried."""
    candidates = [path] if path else ["libnccl.so.2"]
    if not path:
        try:
            import nvidia.nccl  # The wheel PyTorch depends on, where it is installed.
            candidates += [os.path.join(p, "lib", "libnccl.so.2") for p in nvidia.nccl.__path__]
        except ImportError:
            pass
    tried = []
    for candidate in candidates:
        try:
            return ctypes.CDLL(candidate)
        except OSError as e:
            tried.append(f"{candidate}: {e}")
    raise NcclError("NCCL cannot be loaded (" + "; ".join(tried) + ")")


class NcclComms:
    """One NCCL communicator per rank over `devices` (distinct GPUs, in rank order). Use as a
    context manager or call close()."""

    def __init__(self, devices, path=None):
        if len(set(devices)) < len(devices):
            raise NcclError(f"NCCL refuses two ranks on one GPU (devices {list(devices)})")
        lib = load_nccl(path)
        try:
            lib.ncclGetErrorString.restype = ctypes.c_char_p
            lib.ncclGetErrorString.argtypes = [ctypes.c_int]
            lib.ncclGetVersion.argtypes = [ctypes.POINTER(ctypes.c_int)]
            lib.ncclCommInitAll.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                                            ctypes.POINTER(ctypes.c_int)]
            for name in ("ncclSend", "ncclRecv"):
                getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                               ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
            lib.ncclCommDestroy.argtypes = [ctypes.c_void_p]
            lib.ncclCommAbort.argtypes = [ctypes.c_void_p]
        except AttributeError as e:  # A library before send and receive (2.7).
            raise NcclError(f"this NCCL lacks a function the comparison needs: {e}") from None
        self._lib = lib
        version = ctypes.c_int()
        self._check(lib.ncclGetVersion(ctypes.byref(version)), "ncclGetVersion")
        self.version = version.value
        if self.version < NCCL_LEAST_VERSION:
            raise NcclError(f"NCCL {self.version} has no bfloat16 (2.10 or later needed)")
        n = len(devices)
        self._ending = threading.Lock()  # abort() and close() end every communicator once.
        self._comms = (ctypes.c_void_p * n)()
        self._check(lib.ncclCommInitAll(self._comms, n, (ctypes.c_int * n)(*devices)),
                    "ncclCommInitAll")

    def _check(self, code: int, what: str) -> None:
        if code != 0:
            raise NcclError(f"{what}: {self._lib.ncclGetErrorString(code).decode()} ({code})")

    @staticmethod
    def pieces(pairs):
        """The (peer, send pointer, send count, receive pointer, receive count) of `pairs` of
        (peer, tensor to send, tensor to receive into), contiguous bf16 tensors allocated for
        good: what exchange() takes, worked out once rather than at every call."""
        return [(peer, send.data_ptr(), send.numel(), receive.data_ptr(), receive.numel())
                for peer, send, receive in pairs]

    def exchange(self, rank: int, pieces, stream_handle: int) -> None:
        """Rank `rank`'s sends and receives (`pieces`, from pieces()) as one group on the stream
        `stream_handle`; empty ones are skipped (their peer skips its side alike)."""
        lib, comm = self._lib, self._comms[rank]
        self._check(lib.ncclGroupStart(), "ncclGroupStart")
        try:
            for peer, send, sent, receive, received in pieces:
                if sent:
                    self._check(lib.ncclSend(send, sent, NCCL_BFLOAT16, peer, comm,
                                             stream_handle), "ncclSend")
                if received:
                    self._check(lib.ncclRecv(receive, received, NCCL_BFLOAT16, peer, comm,
                                             stream_handle), "ncclRecv")
        except BaseException:
            lib.ncclGroupEnd()  # Unchecked: the error already raised is the one to report.
            raise
        self._check(lib.ncclGroupEnd(), "ncclGroupEnd")

    def abort(self) -> None:
        """Ends every communicator at once (ncclCommAbort), from any thread: the ranks' NCCL
        kernels that wait for a rank that failed return, so that no thread waits for them
        for ever."""
        self._end(self._lib.ncclCommAbort)

    def close(self) -> None:
        self._end(self._lib.ncclCommDestroy)

    def _end(self, end) -> None:
        with self._ending:
            comms, self._comms = self._comms, (ctypes.c_void_p * 0)()
        for comm in comms:
            if comm:
                end(comm)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
