"""Which GPU is here, and its roofs computed from its own attributes (P1, P3).

CUDA 13 dropped clockRate and memoryClockRate from cudaDeviceProp, so clocks
come from device attributes, falling back to NVML's maximum clocks.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass, field

from rooflab.cuda.gpu import cupy
from rooflab.model import arch

# cudaDeviceAttr values (stable across CUDA 11-13)
_ATTR = {
    "sm_count": 16,  # cudaDevAttrMultiProcessorCount
    "clock_khz": 13,  # cudaDevAttrClockRate
    "mem_clock_khz": 36,  # cudaDevAttrMemoryClockRate
    "bus_width": 37,  # cudaDevAttrGlobalMemoryBusWidth
    "l2_bytes": 38,  # cudaDevAttrL2CacheSize
    "cc_major": 75,
    "cc_minor": 76,
    "smem_per_block_optin": 97,  # cudaDevAttrMaxSharedMemoryPerBlockOptin
}


@dataclass
class DeviceInfo:
    index: int
    name: str
    cc: tuple[int, int]
    arch: str
    sm_count: int
    fp32_cores_per_sm: int | None
    sm_clock_max_mhz: float
    mem_clock_max_mhz: float
    bus_width_bits: int
    l2_bytes: int
    memory_bytes: int
    pci_bus_id: str = ""
    driver_version: str = ""
    cuda_runtime_version: int = 0
    cupy_version: str = ""
    sources: dict = field(default_factory=dict)

    @property
    def fp32_peak_flops(self) -> float | None:
        """P1: SMs x FP32 cores/SM x 2 (an FMA is 2 FLOP) x SM clock."""
        if not self.fp32_cores_per_sm:
            return None
        return self.sm_count * self.fp32_cores_per_sm * 2 * self.sm_clock_max_mhz * 1e6

    @property
    def hbm_peak_bytes_per_s(self) -> float | None:
        """Double data rate: 2 transfers per memory clock x bus width in bytes."""
        if not (self.mem_clock_max_mhz and self.bus_width_bits):
            return None
        return 2 * self.mem_clock_max_mhz * 1e6 * self.bus_width_bits / 8

    def to_dict(self) -> dict:
        d = asdict(self)
        d["cc"] = list(self.cc)
        d["fp32_peak_flops"] = self.fp32_peak_flops
        d["hbm_peak_bytes_per_s"] = self.hbm_peak_bytes_per_s
        return d


def _nvml_max_clocks(pci_bus_id: str) -> tuple[float | None, float | None, str]:
    try:
        import pynvml  # noqa: PLC0415

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id.encode() if isinstance(pci_bus_id, str) else pci_bus_id)
        sm = pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)
        mem = pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM)
        drv = pynvml.nvmlSystemGetDriverVersion()
        return float(sm), float(mem), drv if isinstance(drv, str) else drv.decode()
    except Exception:
        return None, None, ""


def detect(index: int = 0) -> DeviceInfo:
    """Read the device's attributes (raises NoGPUError where there is none)."""
    cp = cupy()
    rt = cp.cuda.runtime

    def attr(key: str) -> int:
        try:
            return int(rt.deviceGetAttribute(_ATTR[key], index))
        except Exception:
            return 0

    props = rt.getDeviceProperties(index)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    cc = (attr("cc_major"), attr("cc_minor"))
    pci = ""
    with contextlib.suppress(Exception):
        pci = cp.cuda.Device(index).pci_bus_id
    nv_sm, nv_mem, driver = _nvml_max_clocks(pci) if pci else (None, None, "")
    sources = {}
    sm_mhz = attr("clock_khz") / 1000
    sources["sm_clock"] = "cudaDevAttrClockRate"
    if not sm_mhz and nv_sm:
        sm_mhz, sources["sm_clock"] = nv_sm, "NVML max SM clock"
    mem_mhz = attr("mem_clock_khz") / 1000
    sources["mem_clock"] = "cudaDevAttrMemoryClockRate"
    if not mem_mhz and nv_mem:
        mem_mhz, sources["mem_clock"] = nv_mem, "NVML max memory clock"
    sources["fp32_cores_per_sm"] = "rooflab.model.arch table (CUDA programming guide throughput table)"
    sources["nvml_max_clocks_mhz"] = {"sm": nv_sm, "mem": nv_mem}
    return DeviceInfo(
        index=index,
        name=name,
        cc=cc,
        arch=arch.arch_name(cc),
        sm_count=attr("sm_count"),
        fp32_cores_per_sm=arch.fp32_cores_per_sm(cc),
        sm_clock_max_mhz=sm_mhz,
        mem_clock_max_mhz=mem_mhz,
        bus_width_bits=attr("bus_width"),
        l2_bytes=attr("l2_bytes"),
        memory_bytes=int(props.get("totalGlobalMem", 0)),
        pci_bus_id=pci,
        driver_version=driver,
        cuda_runtime_version=int(rt.runtimeGetVersion()),
        cupy_version=cp.__version__,
        sources=sources,
    )


def document_entry(dev: DeviceInfo) -> dict:
    """The device as results documents store it: attributes, P1/P3 roofs, and the
    published tensor-core rates of the matching spec-table entry (if any)."""
    from rooflab.model.specs import match_device_name  # noqa: PLC0415

    d = dev.to_dict()
    spec = match_device_name(dev.name)
    d["spec_key"] = spec.key if spec else None
    d["tensor_peaks"] = {p: v * 1e12 for p, v in spec.tensor_tflops.items()} if spec else {}
    d["tensor_peaks_source"] = spec.source if spec else "no spec-table entry for this device"
    return d
