"""Checks that the examples of README.md and the guides are the code that is built and run:
the C++ examples of README.md, ltx/docs/alltoall.md and ltx/runtime.h are what
tests/examples_test.cc compiles (each example's lines, indentation aside, in order and
contiguously between that file's "// [<name>]" and "// [end]" markers), and README's C and
Python examples are tools/c_api_example/quick_start.c and ltx/python/examples/quick_start.py."""
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

    def test_alltoall_guide_example(self):
        blocks = re.findall(r"```cpp\n(.*?)```", read("ltx/docs/alltoall.md"), re.S)
        self.assertTrue(blocks, "ltx/docs/alltoall.md has no C++ example")
        self.assertEqual(normalise(blocks[0].splitlines()),
                         marked(self.examples, "all-to-all guide example"))

    def test_readme_c_and_python_examples_are_the_built_files(self):
        readme = read("README.md")
        for fence, path in (("c", "tools/c_api_example/quick_start.c"),
                            ("python", "ltx/python/examples/quick_start.py")):
            blocks = re.findall(r"```" + fence + r"\n(.*?)```", readme, re.S)
            self.assertEqual(len(blocks), 1, f"README.md has no single {fence} example")
            self.assertEqual(normalise(blocks[0].splitlines()),
                             normalise(read(path).splitlines()), f"README.md's {fence} example")

    def test_runtime_header_example(self):
        header = read("ltx/runtime.h").splitlines()
        start = next(i for i, l in enumerate(header) if l.startswith("//   "))
        end = next(i for i in range(start, len(header)) if header[i] == "//")
        code = [l[len("//"):] for l in header[start:end]]
        self.assertEqual(normalise(code), marked(self.examples, "runtime.h example"))


if __name__ == "__main__":
    sys.exit(unittest.main())
