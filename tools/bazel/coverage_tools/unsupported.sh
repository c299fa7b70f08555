#!/bin/bash
# Stand-in for Bazel's coverage tools: this build does not support coverage.
echo "bazel coverage is not supported in this workspace" >&2
exit 1
