"""rooflab: how close do GPU kernels get to the roofs of the GPU they run on."""

__version__ = "0.1.0"
