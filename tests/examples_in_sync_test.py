"""Checks that the C++ examples of README.md and ltx/runtime.h are the code that
tests/examples_test.cc compiles: each example's lines (indentation aside) must appear,
in order and contiguously, between that file's "// [<name>]" and "// [end]" markers."""
import os
import re
import sys
import unittest

ROOT = os.environ.get("TEST_SRCDIR", "")
if ROOT:
    ROOT = os.path.join(ROOT, os.environ.get("TEST_WORKSPACE", "ltx"))


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return f.read()


def normalise(lines):
    return [re.sub(r"\s+", " ", line.strip()) for line in lines if line.strip()]


def marked(source, name):
    match = re.search(r"// \[" + re.escape(name) + r"\]\n(.*?)\n\s*// \[end\]", source, re.S)
    if match is None:
        raise AssertionError(f"tests/examples_test.cc has no [{name}] block")
    return normalise(match.group(1).splitlines())


class ExamplesInSyncTest(unittest.TestCase):
    def setUp(self):
        self.examples = read("tests/examples_test.cc")

    def test_readme_example(self):
        blocks = re.findall(r"```cpp\n(.*?)```", read("README.md"), re.S)
        self.assertTrue(blocks, "README.md has no C++ example")
        code = [l for l in blocks[0].splitlines() if not l.startswith("#include")]
        self.assertEqual(normalise(code), marked(self.examples, "README example"))

    def test_readme_alltoall_example(self):
        blocks = re.findall(r"```cpp\n(.*?)```", read("README.md"), re.S)
        self.assertGreater(len(blocks), 1, "README.md has no all-to-all example")
        self.assertEqual(normalise(blocks[1].splitlines()),
                         marked(self.examples, "README all-to-all example"))

    def test_runtime_header_example(self):
        header = read("ltx/runtime.h").splitlines()
        start = next(i for i, l in enumerate(header) if l.startswith("//   "))
        end = next(i for i in range(start, len(header)) if header[i] == "//")
        code = [l[len("//"):] for l in header[start:end]]
        self.assertEqual(normalise(code), marked(self.examples, "runtime.h example"))


if __name__ == "__main__":
    sys.exit(unittest.main())
