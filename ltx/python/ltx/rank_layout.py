"""The rank layout that ltx's tests, benchmarks and examples run on: which GPU each rank uses.
A GPU may host several ranks ([0, 0, 0, 0]: four ranks on GPU 0), each with its own stream.

The layout comes from the environment, as for the C++ tests:
  LTX_TEST_DEVICES=0,0,1  device ordinals in rank order (repeats allowed; 1 to 8 ranks);
  else LTX_TEST_RANKS=N   N ranks (1 to 8) round robin over the visible GPUs;
  else                    one rank per visible GPU (at most 8).
A run that needs more ranks than the layout has runs that many round robin over the layout's
GPUs, and says so in one line. LTX_REQUIRE_RUN=1 turns a skip into a failure. A malformed
value raises ltx.InvalidArgumentError.

    devices = rank_layout.devices_for_run(visible_gpus, needed=2)  # [] when no GPU is visible
    if not devices:
        sys.exit(rank_layout.skip_status("example", "no GPU visible"))
"""

from __future__ import annotations

import os

from .errors import invalid_argument

MAX_RANKS = 8
SKIPPED_EXIT = 77  # Exit status of a script that skipped (77, as automake's test drivers).


def parse_devices(text: str, what: str = "LTX_TEST_DEVICES") -> list:
    """The device ordinals of `text`, e.g. "0,0,1": 1 to MAX_RANKS integers >= 0 separated by
    commas. `what` names the source in the error."""
    entries = [entry.strip() for entry in text.split(",")]
    if not all(_is_count(entry) for entry in entries):
        raise invalid_argument(
            f"{what}={text!r}: expected device ordinals >= 0 separated by commas, e.g. 0,0,1")
    if not 1 <= len(entries) <= MAX_RANKS:
        raise invalid_argument(f"{what}={text!r} names {len(entries)} ranks; 1 to {MAX_RANKS}")
    return [int(entry) for entry in entries]


def _is_count(text: str) -> bool:
    """Whether `text` is a decimal integer >= 0 (ASCII digits only)."""
    return text.isascii() and text.isdigit()


def _visible_only(devices: list, what: str, text: str, visible: int) -> list:
    """`devices` (parsed from `what`=`text`) after checking it names visible GPUs only; []
    when `visible` is 0."""
    if visible and max(devices) >= visible:
        raise invalid_argument(
            f"{what}={text!r} names GPU {max(devices)}, but {visible} GPU(s) are visible")
    return devices if visible else []


def environment_layout(visible: int, environ=None) -> list:
    """The layout the environment names over `visible` GPUs (see the module comment); [] when
    `visible` is 0. LTX_TEST_DEVICES is checked even then, and names visible GPUs only."""
    environ = os.environ if environ is None else environ
    devices_text = environ.get("LTX_TEST_DEVICES", "")
    ranks_text = environ.get("LTX_TEST_RANKS", "")
    if devices_text:
        return _visible_only(parse_devices(devices_text), "LTX_TEST_DEVICES", devices_text,
                             visible)
    if ranks_text:
        if not _is_count(ranks_text.strip()) or not 1 <= int(ranks_text) <= MAX_RANKS:
            raise invalid_argument(
                f"LTX_TEST_RANKS={ranks_text!r}: expected a rank count from 1 to {MAX_RANKS}")
        return [rank % visible for rank in range(int(ranks_text))] if visible else []
    return list(range(min(visible, MAX_RANKS)))


def widen(devices: list, ranks: int) -> list:
    """`ranks` ranks round robin over the distinct GPUs of `devices` (in the order they first
    appear) when `devices` has fewer ranks, else `devices` unchanged."""
    if len(devices) >= ranks:
        return list(devices)
    gpus = list(dict.fromkeys(devices))
    return [gpus[rank % len(gpus)] for rank in range(ranks)]


def devices_for_run(visible: int, needed: int = 1, flag=None, environ=None) -> list:
    """The devices of a run that needs at least `needed` ranks: those of `flag` (text such as a
    --devices value, "0,0,1") when given, else the environment's layout, widened to `needed`
    ranks with one line that says the ranks share GPUs. [] when no GPU is visible."""
    if flag:
        devices = _visible_only(parse_devices(flag, "--devices"), "--devices", flag, visible)
    else:
        devices = environment_layout(visible, environ)
    if devices and len(devices) < needed:
        wide = widen(devices, needed)
        print(f"rank layout {devices} has {len(devices)} rank(s), this run needs {needed}: "
              f"ranks share GPUs, {wide}", flush=True)
        return wide
    return devices


def require_run(environ=None) -> bool:
    """Whether LTX_REQUIRE_RUN asks that nothing be skipped: "1" yes, unset, "" or "0" no."""
    value = (os.environ if environ is None else environ).get("LTX_REQUIRE_RUN", "")
    if value not in ("", "0", "1"):
        raise invalid_argument(f"LTX_REQUIRE_RUN={value!r}: expected 0 or 1")
    return value == "1"


def skip_status(name: str, reason: str, environ=None) -> int:
    """Prints that `name` skipped because of `reason`; returns the exit status of the skip:
    SKIPPED_EXIT, or 1 under LTX_REQUIRE_RUN=1."""
    if require_run(environ):
        print(f"{name}: FAILED, skipped ({reason}) under LTX_REQUIRE_RUN=1", flush=True)
        return 1
    print(f"{name}: skipped, {reason}", flush=True)
    return SKIPPED_EXIT
