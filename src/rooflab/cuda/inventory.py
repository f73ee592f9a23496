"""What NVML says about each GPU: identity (UUID, serial, PCI bus id), ECC counters,
power, clocks, temperature, throttle reasons, PCIe and NVLink state.

Every NVML call is tried on its own: a field the driver does not support (serial on
many boards, remapped rows before Ampere, NVLink on PCIe cards) is None and the
call's name is listed under "unsupported"; with no NVML at all `read_all` returns
an empty list and `nvml_status` says why. Nothing here needs CUDA.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
from collections.abc import Callable, Sequence

from rooflab.cuda.telemetry import decode_reasons, is_throttle
from rooflab.errors import UsageError

_NVLINK_SWITCH = 2  # nvmlNvLinkDeviceType: 0 GPU, 1 IBM NPU, 2 switch


def normalize_bus_id(bus_id: str | bytes | None) -> str:
    """'00000000:07:00.0' (NVML), '0000:07:00.0' (CUDA) -> '0000:07:00.0', lower case."""
    if bus_id is None:
        return ""
    s = bus_id.decode() if isinstance(bus_id, bytes) else str(bus_id)
    s = s.strip().lower().rstrip("\x00")
    m = re.fullmatch(r"(?:([0-9a-f]+):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})\.([0-9a-f])", s)
    if not m:
        return s
    dom = int(m.group(1) or "0", 16)
    return f"{dom:04x}:{int(m.group(2), 16):02x}:{int(m.group(3), 16):02x}.{m.group(4)}"


def _text(v) -> str:
    return v.decode(errors="replace") if isinstance(v, bytes) else str(v)


@functools.cache
def _nvml():
    """pynvml, initialised; raises RuntimeError with the reason where NVML is unusable."""
    try:
        import pynvml
    except Exception as exc:  # noqa: BLE001
        raise RuntimeError(f"pynvml not importable ({exc.__class__.__name__}: {exc})") from None
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001
        raise RuntimeError(f"nvmlInit failed ({exc})") from None
    return pynvml


def nvml_status() -> str | None:
    """None where NVML works, else why not."""
    try:
        _nvml()
    except RuntimeError as exc:
        return str(exc)
    return None


class _Reader:
    def __init__(self, nv, handle):
        self.nv, self.h, self.unsupported = nv, handle, []

    def get(self, name: str, fn: Callable, *args):
        try:
            return fn(self.h, *args)
        except Exception:  # noqa: BLE001
            if name not in self.unsupported:
                self.unsupported.append(name)
            return None


def _nvlink(nv, r: _Reader) -> dict:
    links = []
    for link in range(int(getattr(nv, "NVML_NVLINK_MAX_LINKS", 18))):
        try:
            state = nv.nvmlDeviceGetNvLinkState(r.h, link)
        except Exception:  # noqa: BLE001,S112
            continue
        entry = {"link": link, "active": bool(state), "version": None, "remote_bus_id": None, "remote_type": None}
        with contextlib.suppress(Exception):
            entry["version"] = int(nv.nvmlDeviceGetNvLinkVersion(r.h, link))
        if state:
            with contextlib.suppress(Exception):
                entry["remote_bus_id"] = normalize_bus_id(nv.nvmlDeviceGetNvLinkRemotePciInfo(r.h, link).busId)
            with contextlib.suppress(Exception):
                entry["remote_type"] = int(nv.nvmlDeviceGetNvLinkRemoteDeviceType(r.h, link))
        links.append(entry)
    speed = None
    with contextlib.suppress(Exception):
        fv = nv.nvmlDeviceGetFieldValues(r.h, [nv.NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON])[0]
        if int(fv.nvmlReturn) == 0:
            speed = int(fv.value.uiVal) or None
    return {"links": links, "active": sum(1 for x in links if x["active"]), "speed_mbps_common": speed,
            "switch_links": sum(1 for x in links if x["active"] and x["remote_type"] == _NVLINK_SWITCH)}


def _entry(nv, index: int, h) -> dict:
    r = _Reader(nv, h)
    g = r.get
    pci = g("pci", nv.nvmlDeviceGetPciInfo)
    ecc_mode = g("ecc_mode", nv.nvmlDeviceGetEccMode)

    def ecc(kind: int, counter: int):
        return g(f"ecc_{kind}_{counter}", nv.nvmlDeviceGetTotalEccErrors, kind, counter)

    c, u = nv.NVML_MEMORY_ERROR_TYPE_CORRECTED, nv.NVML_MEMORY_ERROR_TYPE_UNCORRECTED
    remap = g("remapped_rows", nv.nvmlDeviceGetRemappedRows)
    reasons_fn = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or \
        nv.nvmlDeviceGetCurrentClocksThrottleReasons
    mask = g("clock_reasons", reasons_fn)
    names = decode_reasons(int(mask)) if mask is not None else []
    power = g("power", nv.nvmlDeviceGetPowerUsage)
    limit = g("power_limit", nv.nvmlDeviceGetEnforcedPowerLimit)
    mem = g("memory", nv.nvmlDeviceGetMemoryInfo)
    out = {
        "index": index,
        "uuid": _text(g("uuid", nv.nvmlDeviceGetUUID) or "") or None,
        "name": _text(g("name", nv.nvmlDeviceGetName) or "") or None,
        "serial": _text(g("serial", nv.nvmlDeviceGetSerial) or "") or None,
        "pci_bus_id": normalize_bus_id(pci.busId) if pci is not None else None,
        "memory_bytes": int(mem.total) if mem is not None else None,
        "ecc": {
            "enabled": bool(ecc_mode[0]) if ecc_mode else None,
            "volatile": {"corrected": ecc(c, nv.NVML_VOLATILE_ECC), "uncorrected": ecc(u, nv.NVML_VOLATILE_ECC)},
            "aggregate": {"corrected": ecc(c, nv.NVML_AGGREGATE_ECC), "uncorrected": ecc(u, nv.NVML_AGGREGATE_ECC)},
        },
        "remapped_rows": ({"correctable": remap[0], "uncorrectable": remap[1], "pending": bool(remap[2]),
                           "failure": bool(remap[3])} if remap else None),
        "power_w": power / 1000.0 if power is not None else None,
        "power_limit_w": limit / 1000.0 if limit is not None else None,
        "temp_c": g("temperature", nv.nvmlDeviceGetTemperature, nv.NVML_TEMPERATURE_GPU),
        "clocks_mhz": {"sm": g("clock_sm", nv.nvmlDeviceGetClockInfo, nv.NVML_CLOCK_SM),
                       "mem": g("clock_mem", nv.nvmlDeviceGetClockInfo, nv.NVML_CLOCK_MEM),
                       "sm_max": g("max_clock_sm", nv.nvmlDeviceGetMaxClockInfo, nv.NVML_CLOCK_SM),
                       "mem_max": g("max_clock_mem", nv.nvmlDeviceGetMaxClockInfo, nv.NVML_CLOCK_MEM)},
        "clock_reasons": {"mask": int(mask) if mask is not None else None, "reasons": names,
                          "throttled": is_throttle(names)},
        "pstate": g("pstate", nv.nvmlDeviceGetPerformanceState),
        "pcie": {"gen": g("pcie_gen", nv.nvmlDeviceGetCurrPcieLinkGeneration),
                 "width": g("pcie_width", nv.nvmlDeviceGetCurrPcieLinkWidth),
                 "gen_max": g("pcie_gen_max", nv.nvmlDeviceGetMaxPcieLinkGeneration),
                 "width_max": g("pcie_width_max", nv.nvmlDeviceGetMaxPcieLinkWidth)},
        "nvlink": _nvlink(nv, r),
        "source": "nvml",
    }
    with contextlib.suppress(Exception):
        out["driver_version"] = _text(nv.nvmlSystemGetDriverVersion())
    out["unsupported"] = r.unsupported
    return out


def read_all() -> list[dict]:
    """Every GPU NVML sees, in NVML (= nvidia-smi, PCI bus) order; [] without NVML."""
    try:
        nv = _nvml()
        count = nv.nvmlDeviceGetCount()
    except Exception:  # noqa: BLE001
        return []
    out = []
    for i in range(count):
        try:
            out.append(_entry(nv, i, nv.nvmlDeviceGetHandleByIndex(i)))
        except Exception:  # noqa: BLE001
            out.append({"index": i, "uuid": None, "source": "nvml", "unsupported": ["handle"]})
    return out


def read_one(*, uuid: str | None = None, pci_bus_id: str | None = None) -> dict | None:
    """One GPU's entry, found by UUID or PCI bus id (None where NVML cannot find it)."""
    want = normalize_bus_id(pci_bus_id) if pci_bus_id else None
    for e in read_all():
        if (uuid and e.get("uuid") == uuid) or (want and e.get("pci_bus_id") == want):
            return e
    return None


def p2p_status(bus_a: str, bus_b: str) -> dict:
    """NVML's P2P capabilities between two GPUs and their common PCIe ancestor."""
    out: dict = {"nvlink": None, "read": None, "common_ancestor": None}
    try:
        nv = _nvml()
        ha = nv.nvmlDeviceGetHandleByPciBusId(bus_a.encode())
        hb = nv.nvmlDeviceGetHandleByPciBusId(bus_b.encode())
    except Exception:  # noqa: BLE001
        return out
    ok = getattr(nv, "NVML_P2P_STATUS_OK", 0)
    for key, idx in (("nvlink", getattr(nv, "NVML_P2P_CAPS_INDEX_NVLINK", 2)),
                     ("read", getattr(nv, "NVML_P2P_CAPS_INDEX_READ", 0))):
        if isinstance(idx, tuple):  # pynvml spells one of them with a trailing comma
            idx = idx[0]
        with contextlib.suppress(Exception):
            out[key] = int(nv.nvmlDeviceGetP2PStatus(ha, hb, idx)) == ok
    names = {0: "internal", 10: "single PCIe switch", 20: "multiple PCIe switches", 30: "host bridge",
             40: "NUMA node", 50: "system (across CPU sockets)"}
    with contextlib.suppress(Exception):
        level = int(nv.nvmlDeviceGetTopologyCommonAncestor(ha, hb))
        out["common_ancestor"] = names.get(level, str(level))
    return out


def cuda_visible_entries(cvd: str | None) -> list[str] | None:
    """CUDA_VISIBLE_DEVICES split into entries (None where it is unset)."""
    if cvd is None:
        return None
    return [x.strip() for x in cvd.split(",") if x.strip()]


def visible(inventory: Sequence[dict], cvd: str | None = None, *, use_env: bool = True) -> list[dict]:
    """The GPUs a CUDA process here would see, in CUDA ordinal order.

    Integers in CUDA_VISIBLE_DEVICES are taken as NVML (nvidia-smi) indices, UUID
    entries match by prefix; CUDA stops at the first entry it cannot match, and so does this.
    """
    if cvd is None and use_env:
        cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    entries = cuda_visible_entries(cvd)
    if entries is None:
        return list(inventory)
    out: list[dict] = []
    for ent in entries:
        match = None
        if ent.isdigit():
            match = next((g for g in inventory if g.get("index") == int(ent)), None)
        elif ent.upper().startswith("GPU-"):
            match = next((g for g in inventory if (g.get("uuid") or "").lower().startswith(ent.lower())), None)
        if match is None or match in out:
            break
        out.append(match)
    return out


def select(inventory: Sequence[dict], spec: str, cvd: str | None = None, *, use_env: bool = True) -> list[dict]:
    """--devices: 'all', or comma-separated CUDA ordinals as this process sees them
    (nvidia-smi indices unless CUDA_VISIBLE_DEVICES is set) or UUIDs."""
    vis = visible(inventory, cvd, use_env=use_env)
    spec = (spec or "all").strip()
    if spec.lower() == "all":
        if not vis:
            raise UsageError("no GPU found (NVML lists none, or CUDA_VISIBLE_DEVICES hides them all)")
        return vis
    chosen: list[dict] = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if part.isdigit():
            k = int(part)
            if k >= len(vis):
                raise UsageError(f"--devices {spec}: there is no GPU {k} here ({len(vis)} visible)")
            g = vis[k]
        else:
            g = next((x for x in vis if (x.get("uuid") or "").lower().startswith(part.lower())), None)
            if g is None:
                raise UsageError(f"--devices {spec}: no visible GPU has UUID {part}")
        if g in chosen:
            raise UsageError(f"--devices {spec}: GPU {part} is named twice")
        chosen.append(g)
    if not chosen:
        raise UsageError("--devices: name at least one GPU, or 'all'")
    return chosen


def _format_uuid(raw) -> str | None:
    """CUDA's 16-byte UUID -> 'GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx' (NVML's spelling)."""
    if raw is None:
        return None
    b = bytes(raw) if not isinstance(raw, bytes) else raw
    if len(b) != 16:
        return None
    h = b.hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def cuda_inventory() -> list[dict]:
    """Fallback where NVML is missing: the GPUs CUDA sees, by ordinal (raises NoGPUError)."""
    from rooflab.cuda.gpu import cupy

    cp = cupy()
    out = []
    for i in range(cp.cuda.runtime.getDeviceCount()):
        props = cp.cuda.runtime.getDeviceProperties(i)
        name = props.get("name", b"")
        pci = ""
        with contextlib.suppress(Exception):
            pci = cp.cuda.Device(i).pci_bus_id
        out.append({"index": i, "uuid": _format_uuid(props.get("uuid")), "name": _text(name) or None,
                    "serial": None, "pci_bus_id": normalize_bus_id(pci) or None,
                    "memory_bytes": int(props.get("totalGlobalMem", 0)) or None, "source": "cuda",
                    "unsupported": ["nvml"]})
    return out
