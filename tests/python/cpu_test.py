"""Tests of the Python package ltx that need no GPU: loading libltx.so, the errors without a
GPU, the exception classes, the checks of tensors and streams (with tensor-like objects), the
calls' arguments as the library receives them (with a stand-in library), the output shapes of
the PyTorch ops, the package without PyTorch, and the rank layout of the tests
(ltx.rank_layout).

    PYTHONPATH=<prefix>/lib/python python3 tests/python/cpu_test.py
"""

import contextlib
import ctypes
import gc
import io
import os
import subprocess
import sys
import textwrap
import unittest
import weakref

import ltx
import ltx.runtime
from ltx import _library, rank_layout, tensors


class FakeDevice:
    def __init__(self, kind, index):
        self.type, self.index = kind, index

    def __str__(self):
        return f"{self.type}:{self.index}"


class FakeTensor:
    """What ltx reads of a torch.Tensor."""

    def __init__(self, shape, dtype="torch.bfloat16", device=("cuda", 0), contiguous=True,
                 pointer=0x1000):
        self.shape, self.dtype = tuple(shape), dtype
        self.device = FakeDevice(*device)
        self._contiguous, self._pointer = contiguous, pointer

    def is_contiguous(self):
        return self._contiguous

    def data_ptr(self):
        return self._pointer


def two_rank_tensors(input_tokens, output_tokens):
    """Bf16 inputs and outputs [2, tokens, 8] of ranks 0 and 1 on cuda:0 and cuda:1, the inputs
    at 0x10 and 0x20, the outputs at 0x30 and 0x40."""
    inputs = [FakeTensor([2, t, 8], device=("cuda", r), pointer=0x10 * (r + 1))
              for r, t in enumerate(input_tokens)]
    outputs = [FakeTensor([2, t, 8], device=("cuda", r), pointer=0x30 + 0x10 * r)
               for r, t in enumerate(output_tokens)]
    return inputs, outputs


class FakeStream:
    cuda_stream = 0x1234


class LibraryTest(unittest.TestCase):
    def test_version_matches_header(self):
        self.assertEqual(ltx.version(), 1000)
        self.assertEqual(ltx.__version__, "0.10.0")

    def test_loads_the_installed_library(self):
        # An install tree's lib/libltx.so, or, installed from the wheel, the one beside the
        # package.
        beside = os.path.join(os.path.dirname(os.path.abspath(ltx.__file__)), "libltx.so")
        path = ltx.library_path()
        self.assertTrue(path.endswith("lib/libltx.so") or path == beside, path)

    def test_code_names_match_the_library(self):
        for cls in ltx.ERROR_CLASSES:
            self.assertEqual(_library.lib().ltx_code_string(cls.code).decode(), cls.code_name)

    def test_create_without_gpu_raises_failed_precondition(self):
        try:
            ltx.Runtime().close()
        except ltx.FailedPreconditionError:
            pass
        else:
            self.skipTest("a GPU is visible: the Runtime was created")
        with self.assertRaises(ltx.FailedPreconditionError) as caught:
            ltx.Runtime()
        self.assertEqual(caught.exception.code, 9)
        self.assertTrue(str(caught.exception).startswith("FAILED_PRECONDITION: "))
        self.assertIn("GPU", str(caught.exception))

    def test_bad_options_raise_invalid_argument(self):
        with self.assertRaises(ltx.InvalidArgumentError):
            ltx.Runtime(transport="nvlink")
        with self.assertRaises(ltx.InvalidArgumentError):
            ltx.Runtime(timeout=-1)
        # Values the C fields cannot hold (ctypes would wrap them silently), and durations that
        # are not finite: refused in Python, naming the argument.
        for kwargs, what in (({"max_blocks": 2 ** 32}, "max_blocks"),
                             ({"max_blocks": True}, "max_blocks"),
                             ({"devices": [2 ** 32]}, r"devices\[0\]"),
                             ({"devices": [0, -1]}, r"devices\[1\]"),
                             ({"copy_engine_min_bytes": 2 ** 64}, "copy_engine_min_bytes"),
                             ({"one_trip_max_bytes": 2 ** 63}, "one_trip_max_bytes"),
                             ({"two_shot_min_bytes": 2 ** 64}, "two_shot_min_bytes"),
                             ({"timeout": 1e13}, "timeout"),
                             ({"timeout": float("nan")}, "timeout"),
                             ({"worker_spin": float("inf")}, "worker_spin")):
            with self.assertRaisesRegex(ltx.InvalidArgumentError, what):
                ltx.Runtime(**kwargs)

    def test_call_options_hold_what_the_c_fields_hold(self):
        from ltx import runtime as module

        class Index:  # An integer of another library (numpy's int64 has __index__ alike).
            def __init__(self, value):
                self.value = value

            def __index__(self):
                return self.value
        self.assertEqual(module._call_options(None, Index(5), "auto").blocks, 5)
        self.assertEqual(module._call_options(1, 0, "auto").timeout_us, 1_000_000)
        # The cache answers only for values it checked: 1, then True and 1.0, are told apart.
        module._call_options(None, 1, "auto")
        for blocks in (True, 1.0):
            with self.assertRaisesRegex(ltx.InvalidArgumentError, "blocks"):
                module._call_options(None, blocks, "auto")
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "timeout"):
            module._call_options(True, 0, "auto")
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "blocks"):
            module._call_options(None, [1], "auto")  # Unhashable: refused, not a TypeError.
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "timeout"):
            module._call_options(10 ** 400, 0, "auto")
        self.assertEqual(module._call_options(1e-7, 0, "auto").timeout_us, 1)  # Never 0.
        self.assertEqual(module._call_options(None, 0, "auto").timeout_us, 0)  # The Runtime's.
        self.assertEqual(module._call_options(None, 7, "auto").blocks, 7)
        for timeout in (0, 0.0, -1.0, float("nan"), float("inf"), "1", True):
            with self.assertRaisesRegex(ltx.InvalidArgumentError, "timeout"):
                module._call_options(timeout, 0, "auto")
        for blocks in (-1, 2 ** 31, 2 ** 32 + 3, 1.0, True):
            with self.assertRaisesRegex(ltx.InvalidArgumentError, "blocks"):
                module._call_options(None, blocks, "auto")
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "generation"):
            module._call_options(None, 0, "auto", 2 ** 64)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "two_shot_min_bytes"):
            module._call_options(None, 0, "auto", None, 2 ** 64)

    def test_eps_must_be_a_positive_finite_fp32(self):
        from ltx import runtime as module
        self.assertEqual(module._eps(1e-6), 1e-6)
        for eps in (0.0, -1e-6, 1e-50, 1e39, float("nan"), float("inf"), "1e-6", True):
            with self.assertRaisesRegex(ltx.InvalidArgumentError, "eps"):
                module._eps(eps)

    def test_library_errors_reach_python(self):
        code = _library.lib().ltx_runtime_status(None)
        with self.assertRaises(ltx.InvalidArgumentError) as caught:
            _library.check(code)
        self.assertEqual(str(caught.exception), "INVALID_ARGUMENT: runtime is NULL")

    def test_struct_sizes_match_the_library(self):
        options = _library.RuntimeOptions()
        _library.check(_library.lib().ltx_runtime_options_init_sized(ctypes.byref(options),
                                                                     ctypes.sizeof(options)))
        self.assertEqual(options.struct_size, ctypes.sizeof(options))
        self.assertEqual((options.timeout_us, options.two_shot_min_bytes), (10_000_000, 1 << 20))
        call = _library.CallOptions()
        _library.check(_library.lib().ltx_call_options_init_sized(ctypes.byref(call),
                                                                  ctypes.sizeof(call)))
        self.assertEqual(call.struct_size, ctypes.sizeof(call))
        self.assertEqual((call.generation, call.two_shot_min_bytes, call.wire), (-1, -1, 0))

    def test_reductions_reach_the_library(self):
        # Without a Runtime, each function names the null one: its prototype is the C API's.
        lib, buffers, op = _library.lib(), _library.RankBuffers(), ctypes.c_void_p()
        counts = (ctypes.c_int64 * 2)(3, 5)
        for name, shape in [("all_reduce", _library.AllReduceShape(1, 8, 1)),
                            ("reduce_scatter", _library.ReduceScatterShape(1, 1, 8, counts, 2, 3))]:
            with self.assertRaisesRegex(ltx.InvalidArgumentError, "runtime is NULL"):
                _library.check(getattr(lib, f"ltx_{name}")(None, ctypes.byref(shape), buffers, 1,
                                                           None, ctypes.byref(op)))
            with self.assertRaisesRegex(ltx.InvalidArgumentError, "runtime is NULL"):
                _library.check(getattr(lib, f"ltx_{name}_rank")(None, 0, ctypes.byref(shape),
                                                                buffers, None))


class ErrorTest(unittest.TestCase):
    def test_classes_by_code(self):
        self.assertIsInstance(ltx.errors.error_for(4, "x"), ltx.DeadlineExceededError)
        self.assertIsInstance(ltx.errors.error_for(4, "x"), TimeoutError)
        self.assertIsInstance(ltx.errors.error_for(3, "x"), ValueError)
        self.assertIsInstance(ltx.errors.error_for(12, "x"), NotImplementedError)
        self.assertEqual(ltx.errors.error_for(99, "x").code, 99)
        self.assertEqual(len(ltx.ERROR_CLASSES), 16)
        for cls in ltx.ERROR_CLASSES:
            self.assertTrue(issubclass(cls, ltx.Error))


class RankLayoutTest(unittest.TestCase):
    def layout(self, visible, **environ):
        return rank_layout.environment_layout(visible, environ)

    def test_devices_name_the_layout(self):
        self.assertEqual(self.layout(2, LTX_TEST_DEVICES="0,0,1", LTX_TEST_RANKS="5"), [0, 0, 1])
        self.assertEqual(self.layout(1, LTX_TEST_DEVICES=" 0, 0 ,0,0"), [0, 0, 0, 0])
        self.assertEqual(self.layout(0, LTX_TEST_DEVICES="0,1"), [])

    def test_ranks_spread_round_robin(self):
        self.assertEqual(self.layout(2, LTX_TEST_RANKS="5"), [0, 1, 0, 1, 0])
        self.assertEqual(self.layout(1, LTX_TEST_RANKS="3"), [0, 0, 0])
        self.assertEqual(self.layout(0, LTX_TEST_RANKS="3"), [])

    def test_default_is_one_rank_per_visible_gpu(self):
        self.assertEqual(self.layout(3), [0, 1, 2])
        self.assertEqual(self.layout(3, LTX_TEST_DEVICES="", LTX_TEST_RANKS=""), [0, 1, 2])
        self.assertEqual(self.layout(16), list(range(8)))
        self.assertEqual(self.layout(0), [])

    def test_malformed_values_raise(self):
        for environ, needle in [({"LTX_TEST_DEVICES": "0,x"}, "separated by commas"),
                                ({"LTX_TEST_DEVICES": "0,-1"}, "separated by commas"),
                                ({"LTX_TEST_DEVICES": "0,,1"}, "separated by commas"),
                                ({"LTX_TEST_DEVICES": ",".join("0" * 9)}, "names 9 ranks"),
                                ({"LTX_TEST_DEVICES": "0,2"}, "names GPU 2, but 2 GPU"),
                                ({"LTX_TEST_RANKS": "0"}, "from 1 to 8"),
                                ({"LTX_TEST_RANKS": "9"}, "from 1 to 8"),
                                ({"LTX_TEST_RANKS": "two"}, "from 1 to 8")]:
            with self.subTest(environ=environ):
                with self.assertRaisesRegex(ltx.InvalidArgumentError, needle):
                    self.layout(2, **environ)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "expected 0 or 1"):
            rank_layout.require_run({"LTX_REQUIRE_RUN": "yes"})

    def test_too_few_ranks_share_the_layout_gpus(self):
        self.assertEqual(rank_layout.widen([1], 2), [1, 1])
        self.assertEqual(rank_layout.widen([0, 1, 0], 4), [0, 1, 0, 1])
        self.assertEqual(rank_layout.widen([2, 0, 1], 2), [2, 0, 1])
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            devices = rank_layout.devices_for_run(1, needed=2, environ={})
        self.assertEqual(devices, [0, 0])
        self.assertIn("ranks share GPUs, [0, 0]", printed.getvalue())
        self.assertEqual(rank_layout.devices_for_run(4, 2, flag="3,1", environ={}), [3, 1])
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "--devices='4'"):
            rank_layout.devices_for_run(4, 2, flag="4", environ={})

    def test_skips_fail_under_require_run(self):
        with contextlib.redirect_stdout(io.StringIO()) as printed:
            self.assertEqual(rank_layout.skip_status("t", "no GPU", {}), 77)
            self.assertEqual(rank_layout.skip_status("t", "no GPU", {"LTX_REQUIRE_RUN": "0"}), 77)
            self.assertEqual(rank_layout.skip_status("t", "no GPU", {"LTX_REQUIRE_RUN": "1"}), 1)
        self.assertIn("t: skipped, no GPU", printed.getvalue())
        self.assertIn("t: FAILED", printed.getvalue())


class TensorCheckTest(unittest.TestCase):
    def test_dtypes(self):
        for name, code in [("torch.bfloat16", 1), ("torch.float16", 2), ("torch.float32", 3),
                           ("torch.float8_e4m3fn", 4), ("torch.float8_e5m2", 5),
                           ("torch.int8", 6), ("torch.uint8", 7), ("torch.int16", 8),
                           ("torch.uint16", 9), ("torch.int32", 10), ("torch.uint32", 11),
                           ("torch.int64", 12), ("torch.uint64", 13), ("torch.float64", 14),
                           ("torch.bool", 15), ("torch.complex64", 16),
                           ("torch.complex128", 17)]:
            self.assertEqual(tensors.dtype_code(FakeTensor([1], name), "t"), code)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "torch.complex32"):
            tensors.dtype_code(FakeTensor([1], "torch.complex32"), "t")

    def test_reduce_dtypes(self):
        for name, code in [("torch.bfloat16", 1), ("torch.float16", 2), ("torch.float32", 3)]:
            self.assertEqual(tensors.dtype_code(FakeTensor([1], name), "t", reduce=True), code)
        for name in ("torch.int8", "torch.float64", "torch.float8_e4m3fn"):
            with self.assertRaisesRegex(ltx.InvalidArgumentError,
                                        f"t has dtype {name}; ltx reduces torch.bfloat16, "
                                        f"torch.float16, torch.float32"):
                tensors.dtype_code(FakeTensor([1], name), "t", reduce=True)

    def test_all_reduce_rank_call(self):
        x = FakeTensor([2, 3, 5], "torch.float32", pointer=1)
        self.assertEqual(tensors.all_reduce_rank_call(0, x, FakeTensor([2, 3, 5], "torch.float32",
                                                                       pointer=2), 0),
                         ((3, 30), 1, 2))
        self.assertEqual(tensors.all_reduce_rank_call(0, x, x, 0), ((3, 30), 1, 1))  # In place.
        self.assertEqual(tensors.all_reduce_rank_call(0, FakeTensor([0, 4]), FakeTensor([0, 4]),
                                                      0)[0], (1, 0))
        cases = [
            ("differ in shape", FakeTensor([2, 3, 5]), FakeTensor([2, 15])),
            ("ltx reduces", FakeTensor([4], "torch.int32"), FakeTensor([4], "torch.int32")),
            ("but output is", FakeTensor([4]), FakeTensor([4], "torch.float16")),
            ("not contiguous", FakeTensor([4]), FakeTensor([4], contiguous=False)),
            ("is on cuda:1", FakeTensor([4], device=("cuda", 1)), FakeTensor([4])),
        ]
        for needle, tensor_in, tensor_out in cases:
            with self.subTest(needle=needle):
                with self.assertRaisesRegex(ltx.InvalidArgumentError, needle):
                    tensors.all_reduce_rank_call(0, tensor_in, tensor_out, 0)

    def test_rmsnorm_rank_call(self):
        def rows(pointer, shape=(3, 64), dtype="torch.bfloat16", **kw):
            return FakeTensor(shape, dtype, pointer=pointer, **kw)
        weight = FakeTensor([64], pointer=5)
        self.assertEqual(tensors.rmsnorm_rank_call(0, rows(1), rows(2), rows(3), rows(4), weight,
                                                   0),
                         ((1, 3, 64), (1, 2, 3, 4, 5)))
        self.assertEqual(tensors.rmsnorm_rank_call(  # Residual in place; rows from [2, 5, 64].
            0, rows(1, (2, 5, 64)), rows(2, (2, 5, 64)), rows(3, (2, 5, 64)),
            rows(3, (2, 5, 64)), weight, 0), ((1, 10, 64), (1, 2, 3, 3, 5)))
        cases = [
            ("output \\[3, 32\\] differ in shape", rows(2, (3, 32)), rows(3), weight),
            ("residual \\[3, 32\\] differ in shape", rows(2), rows(3, (3, 32)), weight),
            ("does not have hidden = 64", rows(2), rows(3), FakeTensor([32])),
            ("but residual is torch.float16", rows(2), rows(3, dtype="torch.float16"), weight),
            ("weight of rank 0 is not contiguous", rows(2), rows(3),
             FakeTensor([64], contiguous=False)),
            ("residual of rank 0 is on cuda:1", rows(2), rows(3, device=("cuda", 1)), weight),
        ]
        for needle, output, residual, w in cases:
            with self.subTest(needle=needle):
                with self.assertRaisesRegex(ltx.InvalidArgumentError, needle):
                    tensors.rmsnorm_rank_call(0, rows(1), output, residual, rows(4), w, 0)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "ltx reduces"):
            tensors.rmsnorm_rank_call(0, rows(1, dtype="torch.int8"), rows(2, dtype="torch.int8"),
                                      rows(3), rows(4), weight, 0)

    def test_reduce_scatter_rank_call(self):
        counts = [3, 0, 5]
        whole, shard = FakeTensor([2, 8, 64], pointer=1), FakeTensor([2, 5, 64], pointer=2)
        self.assertEqual(tensors.rank_call(2, whole, shard, counts, -2, 0, scatter=True),
                         ((1, 2, 64), 1, 2))
        self.assertEqual(tensors.rank_call(1, FakeTensor([8, 4, 4], "torch.float16"),
                                           FakeTensor([0, 4, 4], "torch.float16"), counts, 0, 0,
                                           scatter=True)[0], (2, 1, 16))
        cases = [
            ("expected \\[2, 8, 64\\] and \\[2, 5, 64\\]", shard, whole),
            ("do not match", whole, FakeTensor([2, 3, 64])),
            ("do not match", FakeTensor([2, 8, 32]), shard),
            ("ltx reduces", FakeTensor([2, 8, 64], "torch.uint8"),
             FakeTensor([2, 5, 64], "torch.uint8")),
        ]
        for needle, tensor_in, tensor_out in cases:
            with self.subTest(needle=needle):
                with self.assertRaisesRegex(ltx.InvalidArgumentError, needle):
                    tensors.rank_call(2, tensor_in, tensor_out, counts, -2, 0, scatter=True)

    def test_rank_call_derives_the_shape(self):
        counts = [3, 0, 5]
        result = tensors.rank_call(2, FakeTensor([2, 5, 64]), FakeTensor([2, 8, 64], pointer=7),
                                   counts, -2, 0)
        self.assertEqual(result, ((1, 2, 64), 0x1000, 7))
        result = tensors.rank_call(0, FakeTensor([3, 4, 4]), FakeTensor([8, 4, 4]), counts, 0, 0)
        self.assertEqual(result, ((1, 1, 16), 0x1000, 0x1000))

    def test_alltoall_rank_call_derives_the_shape(self):
        counts = [3, 0, 5]
        seq, heads = FakeTensor([2, 5, 6, 16], pointer=1), FakeTensor([2, 8, 2, 16], pointer=2)
        self.assertEqual(tensors.alltoall_rank_call(2, seq, heads, counts, 3, True, 0),
                         ((1, 2, 6, 16), 1, 2))
        self.assertEqual(tensors.alltoall_rank_call(2, heads, seq, counts, 3, False, 0),
                         ((1, 2, 6, 16), 2, 1))
        empty = FakeTensor([2, 0, 6, 16])
        self.assertEqual(tensors.alltoall_rank_call(1, empty, heads, counts, 3, True, 0)[0],
                         (1, 2, 6, 16))
        # An uneven split of 7 heads: rank 2 holds 4 of them, rank 1 none.
        seven = FakeTensor([2, 5, 7, 16], pointer=1)
        four, none = FakeTensor([2, 8, 4, 16], pointer=2), FakeTensor([2, 8, 0, 16], pointer=3)
        self.assertEqual(tensors.alltoall_rank_call(2, seven, four, counts, 3, True, 0, [3, 0, 4]),
                         ((1, 2, 7, 16), 1, 2))
        self.assertEqual(
            tensors.alltoall_rank_call(1, none, empty, counts, 3, False, 0, [3, 0, 4])[0],
            (1, 2, 6, 16))

    def test_alltoall_rank_call_rejects(self):
        counts = [3, 5]
        seq, heads = FakeTensor([1, 3, 4, 8]), FakeTensor([1, 8, 2, 8])
        cases = [
            ("input \\[1, 3, 4\\] is not \\[batch", FakeTensor([1, 3, 4]), heads, True),
            ("output \\[1, 3, 4\\] is not", heads, FakeTensor([1, 3, 4]), False),
            ("5 heads do not divide among 2", FakeTensor([1, 3, 5, 8]), heads, True),
            ("do not match token counts", FakeTensor([1, 4, 4, 8]), heads, True),
            ("do not match token counts", seq, FakeTensor([1, 7, 2, 8]), True),
            ("do not match token counts", seq, FakeTensor([1, 8, 4, 8]), True),
            ("do not match token counts", seq, FakeTensor([1, 8, 2, 4]), True),
            ("do not match token counts", seq, FakeTensor([2, 8, 2, 8]), True),
            ("expected \\[1, 3, 4, 8\\] and \\[1, 8, 2, 8\\]", heads, FakeTensor([1, 8, 4, 8]),
             False),
            ("but output is", seq, FakeTensor([1, 8, 2, 8], "torch.float16"), True),
            ("not contiguous", seq, FakeTensor([1, 8, 2, 8], contiguous=False), True),
        ]
        for needle, tensor_in, tensor_out, seq_to_heads in cases:
            with self.subTest(needle=needle):
                with self.assertRaisesRegex(ltx.InvalidArgumentError, needle):
                    tensors.alltoall_rank_call(0, tensor_in, tensor_out, counts, 2, seq_to_heads,
                                               0)
        # With a split, the head-sharded tensor holds the rank's share of it.
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "pass head_counts"):
            tensors.alltoall_rank_call(0, FakeTensor([1, 3, 5, 8]), heads, counts, 2, True, 0)
        self.assertEqual(tensors.alltoall_rank_call(0, FakeTensor([1, 3, 5, 8]), FakeTensor(
            [1, 8, 1, 8]), counts, 2, True, 0, [1, 4])[0], (1, 1, 5, 8))
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "expected \\[1, 3, 5, 8\\] and "
                                    "\\[1, 8, 1, 8\\]"):
            tensors.alltoall_rank_call(0, FakeTensor([1, 3, 5, 8]), heads, counts, 2, True, 0,
                                       [1, 4])

    def test_rank_call_rejects(self):
        counts = [3, 5]
        good_in, good_out = FakeTensor([3, 64]), FakeTensor([8, 64])
        cases = [
            ("not contiguous", FakeTensor([3, 64], contiguous=False), good_out, 0),
            ("is on cuda:1", FakeTensor([3, 64], device=("cuda", 1)), good_out, 0),
            ("is on cpu", FakeTensor([3, 64], device=("cpu", None)), good_out, 0),
            ("but its rank runs on cuda:1", good_in, good_out, 1),
            ("but output is", good_in, FakeTensor([8, 64], "torch.float16"), 0),
            ("do not match", FakeTensor([4, 64]), good_out, 0),
            ("do not match", good_in, FakeTensor([9, 64]), 0),
            ("do not match", good_in, FakeTensor([8, 32]), 0),
            ("same rank", good_in, FakeTensor([1, 8, 64]), 0),
            ("not a tensor", object(), good_out, 0),
        ]
        for needle, tensor_in, tensor_out, device in cases:
            with self.subTest(needle=needle):
                with self.assertRaisesRegex(ltx.InvalidArgumentError, needle):
                    tensors.rank_call(0, tensor_in, tensor_out, counts, -2, device)

    def test_output_shapes(self):
        self.assertEqual(tensors.all_gather_output_shape((2, 3, 64), [3, 0, 5], -2), (2, 8, 64))
        self.assertEqual(tensors.all_gather_output_shape([3, 4, 4], [3, 5], 0), (8, 4, 4))
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "no token dimension 2"):
            tensors.all_gather_output_shape((3, 64), [3, 5], 2)
        counts = [3, 0, 5]
        shape = tensors.all_to_all_output_shape
        self.assertEqual(shape((2, 5, 6, 16), 2, counts, True), (2, 8, 2, 16))
        self.assertEqual(shape((2, 8, 2, 16), 2, counts, False), (2, 5, 6, 16))
        self.assertEqual(shape((2, 5, 7, 16), 2, counts, True, [3, 0, 4]), (2, 8, 4, 16))
        self.assertEqual(shape((2, 8, 0, 16), 1, counts, False, [3, 0, 4]), (2, 0, 7, 16))
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "rank 3 of 3"):
            shape((2, 5, 6, 16), 3, counts, True)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "heads, head_dim"):
            shape((2, 5, 96), 0, counts, True)
        scatter = tensors.reduce_scatter_output_shape
        self.assertEqual(scatter((2, 8, 64), 2, counts, -2), (2, 5, 64))
        self.assertEqual(scatter([8, 4, 4], 1, counts, 0), (0, 4, 4))
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "rank 3 of 3"):
            scatter((2, 8, 64), 3, counts, -2)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "no token dimension -3"):
            scatter((8, 64), 0, counts, -3)

    def test_token_counts(self):
        self.assertEqual(tensors.token_counts([FakeTensor([1, 3, 8]), FakeTensor([1, 0, 8])], -2),
                         [3, 0])
        with self.assertRaises(ltx.InvalidArgumentError):
            tensors.token_counts([FakeTensor([8])], -2)

    def test_streams(self):
        self.assertEqual(tensors.stream_handle(FakeStream(), 0), 0x1234)
        self.assertEqual(tensors.stream_handle(42, 0), 42)
        self.assertEqual(tensors.stream_handle(0, 0), 0)
        for bad in ("stream", -1, 1.5, True):
            with self.assertRaises(ltx.InvalidArgumentError):
                tensors.stream_handle(bad, 0)


class TorchOpsImportTest(unittest.TestCase):
    """The package without PyTorch: each case runs in a Python where `import torch` fails."""

    def run_without_torch(self, code):
        blocked = "import sys\nsys.modules['torch'] = None  # import torch raises ImportError\n"
        return subprocess.run([sys.executable, "-c", blocked + textwrap.dedent(code)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=60)

    def test_package_works_without_torch(self):
        result = self.run_without_torch("""
            import ltx
            print(ltx.__version__, ltx.version(), sorted(ltx.DIRECTIONS))
        """)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("0.10.0 1000 ['heads_to_seq', 'seq_to_heads']", result.stdout)

    def test_importing_ltx_does_not_import_torch(self):
        result = subprocess.run(
            [sys.executable, "-c", "import sys, ltx; print('torch' in sys.modules)"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
        self.assertEqual((result.returncode, result.stdout.strip()), (0, "False"), result.stdout)

    def test_torch_ops_need_torch(self):
        result = self.run_without_torch("""
            try:
                import ltx.torch_ops
            except ImportError as e:
                print("ImportError:", e)
        """)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("ImportError: ltx.torch_ops needs PyTorch 2.4 or later", result.stdout)


class FakeLibrary:
    """Stands in for libltx.so: a Runtime over GPUs 0 and 1 that records every call."""

    def __init__(self):
        self.calls = []

    def __getattr__(self, name):
        def call(*args):
            self.calls.append((name, args))
            out = args[-1]._obj if args and hasattr(args[-1], "_obj") else None
            if name.endswith("_options_init_sized"):
                options = args[0]._obj
                options.struct_size = args[1]
            elif name in ("ltx_runtime_create", "ltx_all_gather", "ltx_all_to_all",
                          "ltx_all_reduce", "ltx_reduce_scatter", "ltx_all_gather_tensors",
                          "ltx_all_to_all_tensors"):
                out.value = 0x5000
            elif name == "ltx_runtime_world_size":
                out.value = 2
            elif name == "ltx_runtime_device":
                out.value = args[1]
            elif name == "ltx_runtime_transport":
                out.value = 1
            elif name == "ltx_runtime_generation":
                out.value = 4
            return 0
        return call


class RuntimeGlueTest(unittest.TestCase):
    """What Runtime passes to the library, with FakeLibrary in place of libltx.so."""

    def setUp(self):
        self.fake = FakeLibrary()
        self.saved = ltx.runtime.lib
        ltx.runtime.lib = lambda: self.fake
        self.addCleanup(setattr, ltx.runtime, "lib", self.saved)

    def last(self, name):
        return [args for called, args in self.fake.calls if called == name][-1]

    def test_create(self):
        runtime = ltx.Runtime(devices=[0, 1], timeout=2.5, transport="peer_stores")
        options = self.last("ltx_runtime_create")[0]._obj
        self.assertEqual((options.num_devices, options.devices[0], options.devices[1]), (2, 0, 1))
        self.assertEqual((options.timeout_us, options.transport), (2_500_000, 1))
        self.assertEqual(options.two_shot_min_bytes, 1 << 20)
        ltx.Runtime(two_shot_min_bytes=ltx.NEVER_TWO_SHOT).close()
        self.assertEqual(self.last("ltx_runtime_create")[0]._obj.two_shot_min_bytes, 2**63 - 1)
        self.assertEqual((runtime.world_size, runtime.devices, runtime.transport),
                         (2, [0, 1], "peer_stores"))
        runtime.close()
        self.assertEqual(self.last("ltx_runtime_destroy")[0].value, 0x5000)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "closed"):
            runtime.synchronize()

    def test_all_gather(self):
        runtime = ltx.Runtime()
        inputs = [FakeTensor([2, 3, 8], pointer=0x10), FakeTensor([2, 0, 8], device=("cuda", 1), pointer=0x20)]
        outputs = [FakeTensor([2, 3, 8], pointer=0x30), FakeTensor([2, 3, 8], device=("cuda", 1), pointer=0x40)]
        runtime.all_gather(inputs, outputs, streams=[7, FakeStream()], protocol="direct",
                           timeout=1.0)
        _, shape, buffers, n, call, _ = self.last("ltx_all_gather")
        shape = shape._obj
        self.assertEqual((shape.dtype, shape.batch, shape.hidden, shape.num_ranks), (1, 2, 8, 2))
        self.assertEqual([shape.token_counts[r] for r in range(2)], [3, 0])
        self.assertEqual([(b.input or 0, b.output, b.stream) for b in buffers],
                         [(0x10, 0x30, 7), (0x20, 0x40, 0x1234)])
        self.assertEqual((call._obj.protocol, call._obj.timeout_us), (1, 1_000_000))
        self.assertEqual(self.last("ltx_op_wait")[0].value, 0x5000)
        self.assertEqual(self.last("ltx_op_destroy")[0].value, 0x5000)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "1 inputs"):
            runtime.all_gather(inputs[:1], outputs)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "protocol"):
            runtime.all_gather(inputs, outputs, streams=[0, 0], protocol="fast")
        self.assertEqual(call._obj.wire, ltx.WIRES["native"])
        runtime.all_gather(inputs, outputs, streams=[7, FakeStream()], wire="fp8_e4m3")
        self.assertEqual(self.last("ltx_all_gather")[4]._obj.wire, ltx.WIRES["fp8_e4m3"])
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "wire"):
            runtime.all_gather(inputs, outputs, streams=[0, 0], wire="fp4")

    def test_all_gather_rank(self):
        runtime = ltx.Runtime()
        runtime.all_gather_rank(1, FakeTensor([5, 4], "torch.float8_e5m2", ("cuda", 1), pointer=0x10),
                                FakeTensor([6, 4], "torch.float8_e5m2", ("cuda", 1), pointer=0x20),
                                [1, 5], stream=9)
        _, rank, shape, buffers, call = self.last("ltx_all_gather_rank")
        self.assertEqual((rank, shape._obj.dtype, shape._obj.batch, shape._obj.hidden), (1, 5, 1, 4))
        self.assertEqual((buffers._obj.input, buffers._obj.output, buffers._obj.stream),
                         (0x10, 0x20, 9))
        self.assertEqual((call._obj.protocol, call._obj.timeout_us, call._obj.blocks), (0, 0, 0))
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "rank = 2"):
            runtime.all_gather_rank(2, None, None, [1, 5])

    def test_generation(self):
        runtime = ltx.Runtime()
        self.assertEqual(runtime.generation, 4)
        runtime.all_gather_rank(1, FakeTensor([5, 4], device=("cuda", 1), pointer=0x10),
                                FakeTensor([6, 4], device=("cuda", 1), pointer=0x20), [1, 5],
                                stream=9, generation=runtime.generation)
        self.assertEqual(self.last("ltx_all_gather_rank")[4]._obj.generation, 4)
        for bad in (-1, 1.5, True, "4"):
            with self.assertRaisesRegex(ltx.InvalidArgumentError, "generation"):
                runtime.all_gather_rank(1, None, None, [1, 5], generation=bad)
        runtime.close()
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "closed"):
            runtime.generation

    def test_all_to_all(self):
        runtime = ltx.Runtime()
        seq = [FakeTensor([1, 3, 4, 8], pointer=0x10),
               FakeTensor([1, 0, 4, 8], device=("cuda", 1), pointer=0x20)]
        heads = [FakeTensor([1, 3, 2, 8], pointer=0x30),
                 FakeTensor([1, 3, 2, 8], device=("cuda", 1), pointer=0x40)]
        runtime.all_to_all(seq, heads, streams=[7, FakeStream()], protocol="direct")
        _, shape, buffers, n, call, _ = self.last("ltx_all_to_all")
        shape = shape._obj
        self.assertEqual((shape.dtype, shape.batch, shape.heads, shape.head_dim, shape.num_ranks,
                          shape.direction), (1, 1, 4, 8, 2, 0))
        self.assertEqual([shape.token_counts[r] for r in range(2)], [3, 0])
        self.assertEqual([(b.input, b.output or 0, b.stream) for b in buffers],
                         [(0x10, 0x30, 7), (0x20, 0x40, 0x1234)])
        self.assertEqual((n, call._obj.protocol), (2, 1))
        self.assertEqual(self.last("ltx_op_destroy")[0].value, 0x5000)
        self.assertEqual(call._obj.wire, ltx.WIRES["native"])
        runtime.all_to_all(seq, heads, streams=[7, FakeStream()], wire="fp8_e4m3")
        self.assertEqual(self.last("ltx_all_to_all")[4]._obj.wire, ltx.WIRES["fp8_e4m3"])
        runtime.all_to_all_rank(1, seq[1], heads[1], [3, 0], stream=9, wire="fp8_e4m3")
        self.assertEqual(self.last("ltx_all_to_all_rank")[4]._obj.wire, ltx.WIRES["fp8_e4m3"])
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "wire"):
            runtime.all_to_all(seq, heads, streams=[0, 0], wire="fp4")
        runtime.all_to_all(heads, seq, direction="heads_to_seq", streams=[0, 0])
        shape = self.last("ltx_all_to_all")[1]._obj
        self.assertEqual((shape.direction, shape.heads, shape.token_counts[0],
                          shape.token_counts[1]), (1, 4, 3, 0))
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "direction"):
            runtime.all_to_all(seq, heads, direction="sideways")
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "1 inputs"):
            runtime.all_to_all(seq[:1], heads)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "disagree on"):
            runtime.all_to_all([seq[0], FakeTensor([2, 0, 4, 8], device=("cuda", 1))],
                               [heads[0], FakeTensor([2, 3, 2, 8], device=("cuda", 1))],
                               counts=[3, 0], streams=[0, 0])
        self.assertFalse(shape.head_counts)  # NULL: the even split.

    def test_several_tensors(self):
        runtime = ltx.Runtime()
        def qkv(shape, device, base):
            return [FakeTensor(shape, device=("cuda", device), pointer=base + j) for j in range(3)]
        seq = [qkv([1, 3, 4, 8], 0, 0x10), qkv([1, 0, 4, 8], 1, 0x20)]
        heads = [qkv([1, 3, 2, 8], 0, 0x30), tuple(qkv([1, 3, 2, 8], 1, 0x40))]
        runtime.all_to_all(seq, heads, streams=[7, FakeStream()])
        _, shape, tensors, buffers, n, _, _ = self.last("ltx_all_to_all_tensors")
        self.assertEqual((tensors, n, shape._obj.heads, shape._obj.token_counts[0]), (3, 2, 4, 3))
        self.assertEqual([(list(b.inputs), list(b.outputs), b.stream) for b in buffers],
                         [([0x10, 0x11, 0x12, None], [0x30, 0x31, 0x32, None], 7),
                          ([0x20, 0x21, 0x22, None], [0x40, 0x41, 0x42, None], 0x1234)])
        gathered = [qkv([3, 8], 0, 0x50)[:2], qkv([3, 8], 1, 0x60)[:2]]
        runtime.all_gather(gathered, [qkv([6, 8], 0, 0x70)[:2], qkv([6, 8], 1, 0x80)[:2]],
                           counts=[3, 3], streams=[0, 0])
        self.assertEqual(self.last("ltx_all_gather_tensors")[2], 2)
        runtime.prepare_all_gather_rank(1, seq[1][:1], qkv([1, 3, 4, 8], 1, 0x70)[:1], [3, 0],
                                        dim=1, stream=9)()
        _, rank, shape, tensors, buffers, _ = self.last("ltx_all_gather_tensors_rank")
        self.assertEqual((rank, tensors, buffers._obj.inputs[0], buffers._obj.stream),
                         (1, 1, 0x20, 9))
        runtime.all_to_all_rank(0, seq[0], heads[0], [3, 0])
        self.assertEqual(self.last("ltx_all_to_all_tensors_rank")[3], 3)
        cases = [
            ("ranks disagree on their tensors", [seq[0], seq[1][0]], [heads[0], heads[1][0]]),
            ("ranks disagree on their tensors", [seq[0], seq[1][:2]], [heads[0], heads[1][:2]]),
            ("rank 0 passes 3 inputs and one tensor outputs", [seq[0], seq[1]],
             [heads[0][0], heads[1]]),
            ("rank 0 passes 3 inputs and 2 outputs", seq, [heads[0][:2], heads[1]]),
            ("expected lists of 1 to 4", [seq[0] * 2, seq[1]], [heads[0] * 2, heads[1]]),
            ("rank 0 passes 0 inputs", [[], seq[1]], [[], heads[1]]),
            ("rank 1's tensors disagree on", [seq[0], [seq[1][0], FakeTensor(
                [1, 0, 4, 8], "torch.float16", ("cuda", 1))]], [heads[0], [heads[1][0], FakeTensor(
                    [1, 3, 2, 8], "torch.float16", ("cuda", 1))]]),
        ]
        for needle, inputs, outputs in cases:
            with self.subTest(needle=needle):
                with self.assertRaisesRegex(ltx.InvalidArgumentError, needle):
                    runtime.all_to_all(inputs, outputs, counts=[3, 0], streams=[0, 0])
        x = FakeTensor([4], "torch.float32")
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "ltx_all_reduce takes one input"):
            runtime.all_reduce_rank(0, [x], [x])

    def test_a_refused_per_rank_call_stops_the_runtime(self):
        runtime = ltx.Runtime()
        x = FakeTensor([5, 4], device=("cuda", 1), pointer=0x10)
        y = FakeTensor([6, 4], device=("cuda", 1), pointer=0x20)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, r"counts\[1\] = -5"):
            runtime.prepare_all_gather_rank(1, x, y, [1, -5], stream=9)  # Nothing called yet.
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "rank = 2"):
            runtime.all_gather_rank(2, x, y, [1, 5], stream=9)  # No op's caller: no stop.
        self.assertNotIn("ltx_runtime_stop", [name for name, _ in self.fake.calls])
        with self.assertRaisesRegex(ltx.InvalidArgumentError, r"counts\[1\] = -5"):
            runtime.all_gather_rank(1, x, y, [1, -5], stream=9)
        handle, code, text = self.last("ltx_runtime_stop")
        self.assertEqual((handle.value, code), (0x5000, 3))
        self.assertTrue(text.startswith(b"counts[1] = -5 must be an integer"), text)
        self.assertNotIn("ltx_all_gather_rank", [name for name, _ in self.fake.calls])

    def test_any_refused_argument_of_a_per_rank_call_stops_the_runtime(self):
        x = FakeTensor([5, 4], device=("cuda", 1), pointer=0x10)
        y = FakeTensor([6, 4], device=("cuda", 1), pointer=0x20)
        for counts, dim in ((None, -2), (5, -2), ([1, 5], 1.5)):
            with self.subTest(counts=counts, dim=dim):
                self.fake.calls.clear()
                runtime = ltx.Runtime()
                with self.assertRaises(Exception):
                    runtime.all_gather_rank(1, x, y, counts, stream=9, dim=dim)
                handle, code, text = self.last("ltx_runtime_stop")
                self.assertEqual((handle.value, code), (0x5000, 3))
                self.assertTrue(text.startswith(b"rank 1: ") or b"counts" in text, text)
                self.assertNotIn("ltx_all_gather_rank", [name for name, _ in self.fake.calls])

    def test_a_refused_call_of_an_older_generation_is_aborted_and_stops_nothing(self):
        runtime = ltx.Runtime()  # FakeLibrary: generation 4.
        x = FakeTensor([5, 4], device=("cuda", 1), pointer=0x10)
        y = FakeTensor([6, 4], device=("cuda", 1), pointer=0x20)
        with self.assertRaisesRegex(ltx.AbortedError, "reset generation 3, but the Runtime was "
                                                      r"Reset since \(now 4\)"):
            runtime.all_gather_rank(1, x, y, [1, -5], stream=9, generation=3)
        self.assertNotIn("ltx_runtime_stop", [name for name, _ in self.fake.calls])
        with self.assertRaises(ltx.InvalidArgumentError):  # The current generation: stopped.
            runtime.all_gather_rank(1, x, y, [1, -5], stream=9, generation=4)
        self.assertIn("ltx_runtime_stop", [name for name, _ in self.fake.calls])

    def test_the_rmsnorm_rank_is_checked_as_every_rank(self):
        runtime = ltx.Runtime()
        x = FakeTensor([4, 8], device=("cuda", 1), pointer=0x10)
        w = FakeTensor([8], device=("cuda", 1), pointer=0x40)
        for rank in (True, 1.0, 2, -1):
            with self.subTest(rank=rank):
                with self.assertRaisesRegex(ltx.InvalidArgumentError, "rank"):
                    runtime.prepare_all_reduce_rmsnorm_rank(rank, x, x, x, w)

    def test_a_bad_wait_timeout_is_refused_before_the_launch(self):
        runtime = ltx.Runtime()
        inputs, outputs = two_rank_tensors([3, 0], [3, 3])
        for wait_timeout in (None, -1, float("inf")):
            with self.subTest(wait_timeout=wait_timeout):
                with self.assertRaisesRegex(ltx.InvalidArgumentError, "wait_timeout"):
                    runtime.all_gather(inputs, outputs, streams=[7, 8],
                                       wait_timeout=wait_timeout)
        self.assertNotIn("ltx_all_gather", [name for name, _ in self.fake.calls])
        runtime.all_gather(inputs, outputs, streams=[7, 8], wait=False, wait_timeout=None)

    def test_close_holds_the_open_ops_tensors_until_the_runtime_is_destroyed(self):
        runtime = ltx.Runtime()
        inputs, outputs = two_rank_tensors([3, 0], [3, 3])
        watched = weakref.ref(inputs[0])
        op = runtime.all_gather(inputs, outputs, streams=[7, 8], wait=False)  # Not waited for.
        del inputs, outputs
        gc.collect()
        alive_at_destroy = []
        self.fake.ltx_runtime_destroy = lambda handle: alive_at_destroy.append(
            watched() is not None) or 0
        runtime.close()
        self.assertEqual(alive_at_destroy, [True], "the kernels may still read the tensors")
        gc.collect()
        self.assertIsNone(watched())
        self.assertIsNotNone(op)

    def test_a_wait_that_times_out_keeps_the_op_and_its_tensors(self):
        runtime = ltx.Runtime()
        inputs, outputs = two_rank_tensors([3, 0], [3, 3])
        watched = weakref.ref(inputs[0])
        self.fake.ltx_op_wait = lambda *args: 4
        self.fake.ltx_last_error = lambda: b"DEADLINE_EXCEEDED: rank 1 still running"
        with self.assertRaises(ltx.DeadlineExceededError) as caught:
            runtime.all_gather(inputs, outputs, streams=[7, 8])
        op = caught.exception.op
        del inputs, outputs
        gc.collect()
        self.assertIsNotNone(watched(), "the op's tensors are held while it may run")
        self.assertNotIn("ltx_op_destroy", [name for name, _ in self.fake.calls])
        del self.fake.ltx_op_wait
        op.wait()  # It may be waited for again.
        runtime.synchronize()  # Nothing runs any more: the op and its tensors are freed.
        self.assertEqual(self.last("ltx_op_destroy")[0].value, 0x5000)
        gc.collect()
        self.assertIsNone(watched())

    def test_ranks_and_counts_are_integers(self):
        runtime = ltx.Runtime()
        x = FakeTensor([5, 4], device=("cuda", 1), pointer=0x10)
        y = FakeTensor([6, 4], device=("cuda", 1), pointer=0x20)
        for rank in (True, 0.5, None, -1, 2):
            with self.subTest(rank=rank):
                with self.assertRaisesRegex(ltx.InvalidArgumentError, "rank = "):
                    runtime.prepare_all_gather_rank(rank, x, y, [1, 5])
        for counts in ([1.0, 5], [True, 5], ["1", 5], [None, 5], [1, -5]):
            with self.subTest(counts=counts):
                with self.assertRaisesRegex(ltx.InvalidArgumentError, r"counts\[[01]\] = "):
                    runtime.prepare_all_gather_rank(1, x, y, counts)
                with self.assertRaisesRegex(ltx.InvalidArgumentError, r"counts\[[01]\] = "):
                    runtime.all_gather([x, x], [y, y], counts, streams=[0, 0])
        for head_counts in ([3, -1], [1.5, 2]):
            with self.subTest(head_counts=head_counts):
                with self.assertRaisesRegex(ltx.InvalidArgumentError, r"head_counts\[[01]\] = "):
                    runtime.prepare_all_to_all_rank(0, x, y, [1, 5], head_counts=head_counts)

    def test_a_prepared_call_holds_its_tensors(self):
        runtime = ltx.Runtime()
        inputs = [FakeTensor([3, 8], device=("cuda", 1), pointer=0x10 + j) for j in range(3)]
        outputs = [FakeTensor([6, 8], device=("cuda", 1), pointer=0x20 + j) for j in range(3)]
        watched = [weakref.ref(t) for t in inputs + outputs]
        prepared = runtime.prepare_all_gather_rank(1, inputs, outputs, [3, 3], stream=9)
        inputs.clear()
        outputs.clear()
        gc.collect()
        self.assertTrue(all(ref() is not None for ref in watched))
        del prepared
        gc.collect()
        self.assertTrue(all(ref() is None for ref in watched))

    def test_lazy_views_and_streams_of_other_gpus_are_refused(self):
        conjugate = FakeTensor([5, 4], "torch.complex64")
        conjugate.is_conj = lambda: True
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "conj bit"):
            tensors.rank_call(0, conjugate, FakeTensor([5, 4], "torch.complex64"), [5], -2, 0)

        class OtherGpuStream:
            cuda_stream = 0x99
            device = FakeDevice("cuda", 1)
        self.assertEqual(tensors.stream_handle(OtherGpuStream(), 1), 0x99)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "on cuda:1, but its rank runs on"):
            tensors.stream_handle(OtherGpuStream(), 0)

    def test_all_to_all_head_counts(self):
        runtime = ltx.Runtime()
        seq = [FakeTensor([1, 3, 4, 8], pointer=0x10),
               FakeTensor([1, 0, 4, 8], device=("cuda", 1), pointer=0x20)]
        heads = [FakeTensor([1, 3, 3, 8], pointer=0x30),
                 FakeTensor([1, 3, 1, 8], device=("cuda", 1), pointer=0x40)]
        runtime.all_to_all(seq, heads, streams=[0, 0], head_counts=(3, 1))
        shape = self.last("ltx_all_to_all")[1]._obj
        self.assertEqual((shape.heads, shape.head_counts[0], shape.head_counts[1]), (4, 3, 1))
        zero = FakeTensor([1, 3, 0, 8], device=("cuda", 1), pointer=0x40)
        call = runtime.prepare_all_to_all_rank(1, zero, seq[1], [3, 0], direction="heads_to_seq",
                                               head_counts=[4, 0])
        call()
        shape = self.last("ltx_all_to_all_rank")[2]._obj
        self.assertEqual((shape.direction, shape.head_counts[0], shape.head_counts[1]),
                         (1, 4, 0))
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "head_counts has 3 entries"):
            runtime.all_to_all(seq, heads, streams=[0, 0], head_counts=[2, 1, 1])
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "do not match"):
            runtime.all_to_all(seq, heads, streams=[0, 0], head_counts=[2, 2])

    def test_all_to_all_rank(self):
        runtime = ltx.Runtime()
        call = runtime.prepare_all_to_all_rank(
            1, FakeTensor([1, 6, 2, 4], "torch.int8", ("cuda", 1), pointer=0x10),
            FakeTensor([1, 5, 4, 4], "torch.int8", ("cuda", 1), pointer=0x20), [1, 5], stream=9,
            direction="heads_to_seq")
        self.assertIsInstance(call, ltx.RankCall)
        call()
        _, rank, shape, buffers, options = self.last("ltx_all_to_all_rank")
        self.assertEqual((rank, shape._obj.dtype, shape._obj.heads, shape._obj.head_dim,
                          shape._obj.direction), (1, 6, 4, 4, 1))
        self.assertEqual((buffers._obj.input, buffers._obj.output, buffers._obj.stream),
                         (0x10, 0x20, 9))
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "rank = 2"):
            runtime.all_to_all_rank(2, None, None, [1, 5])
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "3 counts"):
            runtime.all_to_all_rank(0, None, None, [1, 5, 0])

    def test_all_reduce(self):
        runtime = ltx.Runtime()
        partials = [FakeTensor([4, 6], "torch.float16", pointer=0x10),
                    FakeTensor([4, 6], "torch.float16", ("cuda", 1), pointer=0x20)]
        runtime.all_reduce(partials, partials, "max", streams=[7, FakeStream()],
                           protocol="direct")  # In place: each output is its input.
        _, shape, buffers, n, call, _ = self.last("ltx_all_reduce")
        self.assertEqual((shape._obj.dtype, shape._obj.count, shape._obj.reduction, n),
                         (2, 24, 2, 2))
        self.assertEqual([(b.input, b.output, b.stream) for b in buffers],
                         [(0x10, 0x10, 7), (0x20, 0x20, 0x1234)])
        self.assertEqual((call._obj.protocol, call._obj.two_shot_min_bytes), (1, -1))
        self.assertEqual(self.last("ltx_op_destroy")[0].value, 0x5000)
        runtime.all_reduce(partials, partials, streams=[0, 0], two_shot_min_bytes=0)
        self.assertEqual(self.last("ltx_all_reduce")[4]._obj.two_shot_min_bytes, 0)
        for bad in (-1, 1.5, True, "0"):
            with self.assertRaisesRegex(ltx.InvalidArgumentError, "two_shot_min_bytes = "):
                runtime.all_reduce(partials, partials, streams=[0, 0], two_shot_min_bytes=bad)
        outputs = [FakeTensor([4, 6], "torch.float16", pointer=0x30),
                   FakeTensor([4, 6], "torch.float16", ("cuda", 1), pointer=0x40)]
        op = runtime.all_reduce(partials, outputs, streams=[0, 0], wait=False)
        self.assertEqual(self.last("ltx_all_reduce")[1]._obj.reduction, 1)  # "sum"
        # The op keeps its tensors alive until it is closed, whatever the caller does to its lists.
        outputs_seen = list(outputs)
        outputs.clear()
        self.assertEqual(list(op._tensors[1]), outputs_seen)
        outputs.extend(outputs_seen)
        op.close()
        self.assertEqual(op._tensors, ())
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "reduction = 'mean'; expected "
                                    "one of sum, max, min"):
            runtime.all_reduce(partials, outputs, "mean")
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "reduction = \\[7, 0\\]"):
            runtime.all_reduce(partials, outputs, [7, 0])  # Streams where the reduction goes.
        with self.assertRaisesRegex(ltx.InvalidArgumentError,
                                    "1 inputs, 2 outputs and 2 streams for 2 ranks"):
            runtime.all_reduce(partials[:1], outputs)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "disagree on \\(dtype, count\\)"):
            runtime.all_reduce([partials[0], FakeTensor([2], "torch.float16", ("cuda", 1))],
                               [outputs[0], FakeTensor([2], "torch.float16", ("cuda", 1))],
                               streams=[0, 0])
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "ltx reduces"):
            runtime.all_reduce([FakeTensor([4], "torch.int8")] * 2,
                               [FakeTensor([4], "torch.int8")] * 2)

    def test_all_reduce_rank(self):
        runtime = ltx.Runtime()
        x = FakeTensor([3, 5], "torch.float32", ("cuda", 1), pointer=0x10)
        call = runtime.prepare_all_reduce_rank(1, x, x, "min", 9, timeout=0.5)
        self.assertIsInstance(call, ltx.RankCall)
        call()
        _, rank, shape, buffers, options = self.last("ltx_all_reduce_rank")
        self.assertEqual((rank, shape._obj.dtype, shape._obj.count, shape._obj.reduction),
                         (1, 3, 15, 3))
        self.assertEqual((buffers._obj.input, buffers._obj.output, buffers._obj.stream),
                         (0x10, 0x10, 9))
        self.assertEqual((options._obj.timeout_us, options._obj.two_shot_min_bytes), (500_000, -1))
        runtime.all_reduce_rank(1, x, x, stream=9, two_shot_min_bytes=ltx.NEVER_TWO_SHOT)
        _, _, shape, _, options = self.last("ltx_all_reduce_rank")
        self.assertEqual((shape._obj.reduction, options._obj.two_shot_min_bytes), (1, 2**63 - 1))
        runtime.prepare_all_reduce_rank(1, x, x, two_shot_min_bytes=4096)()
        self.assertEqual(self.last("ltx_all_reduce_rank")[4]._obj.two_shot_min_bytes, 4096)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, r"rank = 2 .* in \[0, 1\]"):
            runtime.all_reduce_rank(2, x, x)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "reduction"):
            runtime.all_reduce_rank(1, x, x, "prod")

    def test_reduce_scatter(self):
        runtime = ltx.Runtime()
        inputs, outputs = two_rank_tensors([7, 7], [7, 0])
        runtime.reduce_scatter(inputs, outputs, streams=[7, FakeStream()], reduction="min")
        _, shape, buffers, n, call, _ = self.last("ltx_reduce_scatter")
        shape = shape._obj
        self.assertEqual((shape.dtype, shape.batch, shape.hidden, shape.num_ranks,
                          shape.reduction), (1, 2, 8, 2, 3))
        self.assertEqual([shape.token_counts[r] for r in range(2)], [7, 0])  # From the outputs.
        self.assertEqual([(b.input, b.output, b.stream) for b in buffers],
                         [(0x10, 0x30, 7), (0x20, 0x40, 0x1234)])
        self.assertEqual(self.last("ltx_op_destroy")[0].value, 0x5000)
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "do not match token counts"):
            runtime.reduce_scatter(inputs, outputs, [3, 4], streams=[0, 0])
        with self.assertRaisesRegex(ltx.InvalidArgumentError,
                                    "2 inputs, 2 outputs, 2 streams and 3 counts for 2 ranks"):
            runtime.reduce_scatter(inputs, outputs, [7, 0, 0], streams=[0, 0])
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "reduction"):
            runtime.reduce_scatter(inputs, outputs, reduction="avg")

    def test_reduce_scatter_rank(self):
        runtime = ltx.Runtime()
        whole = FakeTensor([9, 3, 4], "torch.bfloat16", ("cuda", 1), pointer=0x10)
        shard = FakeTensor([6, 3, 4], "torch.bfloat16", ("cuda", 1), pointer=0x20)
        runtime.reduce_scatter_rank(1, whole, shard, [3, 6], 9, reduction="max", dim=0)
        _, rank, shape, buffers, _ = self.last("ltx_reduce_scatter_rank")
        shape = shape._obj
        self.assertEqual((rank, shape.dtype, shape.batch, shape.hidden, shape.reduction),
                         (1, 1, 1, 12, 2))
        self.assertEqual([shape.token_counts[r] for r in range(2)], [3, 6])
        self.assertEqual((buffers._obj.input, buffers._obj.output, buffers._obj.stream),
                         (0x10, 0x20, 9))
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "3 counts for 2 ranks"):
            runtime.reduce_scatter_rank(1, whole, shard, [3, 6, 0], dim=0)
        runtime.reset()  # A refused per-rank call stopped the Runtime.
        with self.assertRaisesRegex(ltx.InvalidArgumentError, "do not match"):
            runtime.prepare_reduce_scatter_rank(1, shard, whole, [3, 6], dim=0)


if __name__ == "__main__":
    unittest.main()
