"""ltx for Python: AllGather, the Ulysses all-to-all, AllReduce and ReduceScatter over NVLink
for one process that drives every GPU of a node.

A ctypes binding of libltx.so (standard library only); see ltx.Runtime. Tensors come from
PyTorch (or anything with data_ptr(), shape, dtype, device, is_contiguous()). The PyTorch
custom ops for torch.compile are in ltx.torch_ops, which imports torch; `import ltx` does not.
"""

# The package's version: the C API's LTX_VERSION_MAJOR.MINOR.PATCH (tools/build_wheel.py checks).
__version__ = "0.10.0"

from .errors import *  # noqa: F401,F403  (Error and one subclass per canonical code)
from .errors import ERROR_CLASSES, Error
from .runtime import (DIRECTIONS, NEVER_TWO_SHOT, PROTOCOLS, REDUCTIONS, TRANSPORTS, WIRES, Op,
                      RankCall, Runtime, library_path, version)
from .tensors import DTYPES, REDUCE_DTYPES

__all__ = ["__version__", "DIRECTIONS", "DTYPES", "ERROR_CLASSES", "Error", "NEVER_TWO_SHOT",
           "Op", "PROTOCOLS", "REDUCE_DTYPES", "REDUCTIONS", "RankCall", "Runtime", "TRANSPORTS",
           "WIRES", "library_path", "version"]
__all__ += [cls.__name__ for cls in ERROR_CLASSES]
