"""Builds the ltx wheel from an install tree (tools/install.sh), with the standard library only:

    python3 tools/build_wheel.py --prefix DIR --out WHEELDIR     # prints the wheel's path

The wheel, ltx-<version>-py3-none-linux_x86_64.whl, holds the Python package with libltx.so and
the Abseil libraries it needs beside it (libltx.so finds them through its $ORIGIN run path, and
the package loads the libltx.so beside itself), so `pip install` of that one file works offline,
in any virtual environment, with no PYTHONPATH. The version is the C API's (LTX_VERSION_*), and
must be the package's __version__.
"""

import argparse
import base64
import hashlib
import os
import re
import sys
import zipfile

TAG = "py3-none-linux_x86_64"


def c_api_version(header):
    """"0.4.0" from the LTX_VERSION_MAJOR/MINOR/PATCH defines of c_api.h."""
    with open(header, encoding="utf-8") as f:
        text = f.read()
    parts = [re.search(rf"#define LTX_VERSION_{p} (\d+)", text) for p in ("MAJOR", "MINOR",
                                                                          "PATCH")]
    if not all(parts):
        raise SystemExit(f"build_wheel: no LTX_VERSION_MAJOR/MINOR/PATCH in {header}")
    return ".".join(m.group(1) for m in parts)


def package_version(init):
    """The __version__ string of ltx/__init__.py."""
    with open(init, encoding="utf-8") as f:
        match = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
    if match is None:
        raise SystemExit(f"build_wheel: no __version__ in {init}")
    return match.group(1)


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build(prefix, out):
    """Writes the wheel of the install tree `prefix` into `out`; returns its path."""
    lib = os.path.join(prefix, "lib")
    package = os.path.join(lib, "python", "ltx")
    version = c_api_version(os.path.join(prefix, "include", "ltx", "c_api.h"))
    if package_version(os.path.join(package, "__init__.py")) != version:
        raise SystemExit(f"build_wheel: ltx.__version__ is not the C API's version {version}")
    files = []  # (name in the wheel, bytes, executable)
    for name in sorted(os.listdir(package)):
        if name.endswith(".py"):
            with open(os.path.join(package, name), "rb") as f:
                files.append((f"ltx/{name}", f.read(), False))
    for name in sorted(os.listdir(lib)):
        if name == "libltx.so" or name.startswith("libabsl_"):
            with open(os.path.join(lib, name), "rb") as f:
                files.append((f"ltx/{name}", f.read(), True))
    if not any(name == "ltx/libltx.so" for name, _, _ in files):
        raise SystemExit(f"build_wheel: no libltx.so in {lib}")
    info = f"ltx-{version}.dist-info"
    files.append((f"{info}/METADATA", (
        "Metadata-Version: 2.1\n"
        "Name: ltx\n"
        f"Version: {version}\n"
        "Summary: AllGather and the Ulysses all-to-all over NVLink for one process that "
        "drives every GPU of a node\n"
        "Requires-Python: >=3.8\n").encode(), False))
    files.append((f"{info}/WHEEL", (
        "Wheel-Version: 1.0\n"
        "Generator: ltx tools/build_wheel.py\n"
        "Root-Is-Purelib: false\n"
        f"Tag: {TAG}\n").encode(), False))
    records = [record_line(name, data) for name, data, _ in files] + [f"{info}/RECORD,,"]
    files.append((f"{info}/RECORD", ("\n".join(records) + "\n").encode(), False))
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, f"ltx-{version}-{TAG}.whl")
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data, executable in files:
            entry = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            entry.external_attr = (0o755 if executable else 0o644) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(entry, data)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prefix", required=True, help="an install tree of tools/install.sh")
    parser.add_argument("--out", required=True, help="the folder to write the wheel into")
    args = parser.parse_args()
    print(build(args.prefix, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
