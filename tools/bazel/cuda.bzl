"""cuda_library: compiles .cu files with nvcc into a static C++ library.

Each .cu file is compiled by one nvcc action whose inputs are the file, the
library's headers and the transitive headers of its deps, so editing any of
them recompiles it. The objects are then wrapped in a cc_library that also
links the static CUDA runtime.
"""

_NVCC = "/usr/local/cuda/bin/nvcc"
_HOST_COMPILER = "/usr/bin/g++-12"

# sm_80 and sm_90 machine code, plus compute_90 PTX for newer GPUs to JIT.
_GENCODE = [
    "-gencode=arch=compute_80,code=sm_80",
    "-gencode=arch=compute_90,code=sm_90",
    "-gencode=arch=compute_90,code=compute_90",
]

def _cxx_std(ctx):
    """Returns the -std= flag of the C++ options, c++17 if none is set."""
    std = "-std=c++17"
    for opt in ctx.fragments.cpp.cxxopts:
        if opt.startswith("-std="):
            std = opt
    return std

def _include_flags(path):
    """-I for the workspace's own headers, -isystem for external ones.

    Header directories of external repositories (e.g. Abseil's virtual
    includes) are system directories, so nvcc does not warn about them.
    """
    if path.startswith("external/") or "/external/" in path:
        return ["-isystem", path]
    return ["-I" + path]

def _cuda_objects_impl(ctx):
    cc = cc_common.merge_cc_infos(
        cc_infos = [dep[CcInfo] for dep in ctx.attr.deps],
    ).compilation_context

    common = [
        "-x",
        "cu",
        "-ccbin",
        _HOST_COMPILER,
        _cxx_std(ctx),
        "-O3",
    ] + _GENCODE + [
        "-Xcompiler",
        "-fPIC",
        "--expt-relaxed-constexpr",
    ]

    # Header search path: the workspace root, then the deps' directories.
    # nvcc has no -iquote; -I serves quoted includes as well.
    seen = {}
    for d in (
        [".", ctx.bin_dir.path, ctx.genfiles_dir.path] +
        cc.quote_includes.to_list() + cc.includes.to_list() +
        cc.system_includes.to_list()
    ):
        if d not in seen:
            seen[d] = True
            common += _include_flags(d)
    common += ["-D" + d for d in cc.defines.to_list()]
    common += ctx.attr.copts

    package_prefix = ctx.label.package + "/" if ctx.label.package else ""
    outputs = []
    for src in ctx.files.srcs:
        stem = src.short_path
        if stem.startswith(package_prefix):
            stem = stem[len(package_prefix):]
        stem = stem[:-len(src.extension) - 1]
        obj = ctx.actions.declare_file(
            "_cuda_objs/%s/%s.pic.o" % (ctx.label.name, stem),
        )
        ctx.actions.run(
            executable = _NVCC,
            arguments = common + ["-c", src.path, "-o", obj.path],
            inputs = depset([src] + ctx.files.hdrs, transitive = [cc.headers]),
            outputs = [obj],
            mnemonic = "NvccCompile",
            progress_message = "Compiling CUDA %s" % src.short_path,
            use_default_shell_env = True,
        )
        outputs.append(obj)
    return [DefaultInfo(files = depset(outputs))]

_cuda_objects = rule(
    implementation = _cuda_objects_impl,
    attrs = {
        "copts": attr.string_list(),
        "deps": attr.label_list(providers = [CcInfo]),
        "hdrs": attr.label_list(allow_files = [".h", ".cuh", ".hpp", ".inl"]),
        "srcs": attr.label_list(allow_files = [".cu"], mandatory = True),
    },
    fragments = ["cpp"],
)

def cuda_library(
        name,
        srcs,
        hdrs = [],
        deps = [],
        copts = [],
        tags = [],
        testonly = False,
        visibility = None):
    """A C++ library whose sources are CUDA .cu files.

    Args:
      name: name of the resulting cc_library.
      srcs: .cu files, each compiled separately by nvcc.
      hdrs: headers (.h, .cuh) of the library, included from the workspace
        root, e.g. "kernels/foo.cuh".
      deps: cc_library targets whose headers the sources include.
      copts: extra nvcc flags.
      tags: tags for both generated targets.
      testonly: testonly for both generated targets.
      visibility: visibility for both generated targets.
    """
    objects = name + "_cuda_objects"
    _cuda_objects(
        name = objects,
        srcs = srcs,
        hdrs = hdrs,
        deps = deps,
        copts = copts,
        tags = tags,
        testonly = testonly,
        visibility = visibility,
    )
    native.cc_library(
        name = name,
        srcs = [":" + objects],
        hdrs = hdrs,
        linkstatic = True,
        deps = deps + ["@cuda//:cudart_static"],
        tags = tags,
        testonly = testonly,
        visibility = visibility,
    )
