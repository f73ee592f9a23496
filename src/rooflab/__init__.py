"""rooflab: how close do your GPU kernels get to the roofs of the GPU they run on?

The Python API (see rooflab.api):
    rooflab.CudaKernel, rooflab.Callable, rooflab.Op   what to measure
    rooflab.bench(...)                                 check, time, profile -> rooflab.Result
    with rooflab.trace() as t: ...                     every kernel a block launched -> t.table()
"""

__version__ = "0.2.0"

_API = {"CudaKernel": "rooflab.targets", "Callable": "rooflab.targets", "Op": "rooflab.ops.record",
        "bench": "rooflab.api", "Result": "rooflab.api", "trace": "rooflab.api", "cdiv": "rooflab.rungs.record"}

__all__ = ["__version__", *_API]


def __getattr__(name: str):
    # lazy: `import rooflab` stays cheap and needs no GPU libraries
    if name in _API:
        import importlib

        return getattr(importlib.import_module(_API[name]), name)
    raise AttributeError(f"module 'rooflab' has no attribute {name!r}")
