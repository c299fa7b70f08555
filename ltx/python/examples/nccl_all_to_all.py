"""NCCL's send and receive through ctypes, for the Ulysses example's comparison: one
communicator per rank from ncclCommInitAll (one process, one GPU per rank: NCCL refuses two
ranks on one GPU), and per rank one group of sends and receives on the rank's stream, from the
rank's own thread. Standard library only; the library is loaded by path (libnccl.so.2 from the
loader's path by default, then the one PyTorch's nvidia-nccl wheel carries)."""

import ctypes
import os

NCCL_BFLOAT16 = 9  # ncclBfloat16 in nccl.h.


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
        lib.ncclGetErrorString.restype = ctypes.c_char_p
        lib.ncclGetErrorString.argtypes = [ctypes.c_int]
        lib.ncclGetVersion.argtypes = [ctypes.POINTER(ctypes.c_int)]
        lib.ncclCommInitAll.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int,
                                        ctypes.POINTER(ctypes.c_int)]
        for name in ("ncclSend", "ncclRecv"):
            getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                           ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
        lib.ncclCommDestroy.argtypes = [ctypes.c_void_p]
        self._lib = lib
        version = ctypes.c_int()
        self._check(lib.ncclGetVersion(ctypes.byref(version)), "ncclGetVersion")
        self.version = version.value
        n = len(devices)
        self._comms = (ctypes.c_void_p * n)()
        self._check(lib.ncclCommInitAll(self._comms, n, (ctypes.c_int * n)(*devices)),
                    "ncclCommInitAll")

    def _check(self, code: int, what: str) -> None:
        if code != 0:
            raise NcclError(f"{what}: {self._lib.ncclGetErrorString(code).decode()} ({code})")

    def exchange(self, rank: int, pairs, stream) -> None:
        """Rank `rank`'s sends and receives as one group on `stream` (a torch.cuda.Stream):
        `pairs` holds (peer, tensor to send, tensor to receive into), contiguous bf16 tensors;
        empty ones are skipped (their peer skips its side alike)."""
        lib, comm, handle = self._lib, self._comms[rank], stream.cuda_stream
        self._check(lib.ncclGroupStart(), "ncclGroupStart")
        try:
            for peer, send, receive in pairs:
                if send.numel():
                    self._check(lib.ncclSend(send.data_ptr(), send.numel(), NCCL_BFLOAT16, peer,
                                             comm, handle), "ncclSend")
                if receive.numel():
                    self._check(lib.ncclRecv(receive.data_ptr(), receive.numel(), NCCL_BFLOAT16,
                                             peer, comm, handle), "ncclRecv")
        finally:
            self._check(lib.ncclGroupEnd(), "ncclGroupEnd")

    def close(self) -> None:
        for comm in self._comms:
            if comm:
                self._lib.ncclCommDestroy(comm)
        self._comms = (ctypes.c_void_p * 0)()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
