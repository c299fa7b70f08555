"""The exceptions of ltx: one class per canonical code, all derived from ltx.Error."""

from __future__ import annotations


class Error(Exception):
    """An ltx call failed. `code` is the canonical code (an int, as in ltx/c_api.h), `code_name`
    its name ("DEADLINE_EXCEEDED"), and `message` the library's text, e.g.
    "DEADLINE_EXCEEDED: all_gather #2: rank 0 waited 1s at entry for rank 1 ..."."""

    code = 2
    code_name = "UNKNOWN"

    def __init__(self, message: str, code: int | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


# (code, name, class name, extra Python base): the canonical codes of absl::StatusCode.
_CODES = (
    (1, "CANCELLED", "CancelledError", None),
    (2, "UNKNOWN", "UnknownError", None),
    (3, "INVALID_ARGUMENT", "InvalidArgumentError", ValueError),
    (4, "DEADLINE_EXCEEDED", "DeadlineExceededError", TimeoutError),
    (5, "NOT_FOUND", "NotFoundError", None),
    (6, "ALREADY_EXISTS", "AlreadyExistsError", None),
    (7, "PERMISSION_DENIED", "PermissionDeniedError", None),
    (8, "RESOURCE_EXHAUSTED", "ResourceExhaustedError", MemoryError),
    (9, "FAILED_PRECONDITION", "FailedPreconditionError", None),
    (10, "ABORTED", "AbortedError", None),
    (11, "OUT_OF_RANGE", "OutOfRangeError", None),
    (12, "UNIMPLEMENTED", "UnimplementedError", NotImplementedError),
    (13, "INTERNAL", "InternalError", None),
    (14, "UNAVAILABLE", "UnavailableError", None),
    (15, "DATA_LOSS", "DataLossError", None),
    (16, "UNAUTHENTICATED", "UnauthenticatedError", None),
)

_BY_CODE = {}
for _code, _name, _class_name, _base in _CODES:
    _bases = (Error,) if _base is None else (Error, _base)
    _BY_CODE[_code] = type(_class_name, _bases, {
        "code": _code,
        "code_name": _name,
        "__doc__": f"ltx code {_code}, {_name}.",
        "__module__": __name__,
    })
    globals()[_class_name] = _BY_CODE[_code]

ERROR_CLASSES = tuple(_BY_CODE.values())


def error_for(code: int, message: str) -> Error:
    """The exception for a non-zero `code` with `message`; Error itself for an unknown code."""
    cls = _BY_CODE.get(code)
    return cls(message) if cls is not None else Error(message, code)


def invalid_argument(text: str) -> Error:
    """An InvalidArgumentError found by the Python layer, worded like the library's."""
    return _BY_CODE[3]("INVALID_ARGUMENT: " + text)
