"""NVML samples taken while a measurement runs: clocks, power, temperature and
the reasons the driver gives for holding clocks down."""

from __future__ import annotations

import statistics
import threading
import time

# Reasons that mean the measurement ran slower than the card can (idle and
# application-clock settings are not throttling).
_THROTTLE_BITS = {
    0x0000000000000004: "sw_power_cap",
    0x0000000000000008: "hw_slowdown",
    0x0000000000000020: "sw_thermal_slowdown",
    0x0000000000000040: "hw_thermal_slowdown",
    0x0000000000000080: "hw_power_brake_slowdown",
    0x0000000000000100: "display_clock_setting",
}
_INFO_BITS = {
    0x0000000000000001: "gpu_idle",
    0x0000000000000002: "applications_clocks_setting",
    0x0000000000000010: "sync_boost",
}


def decode_reasons(mask: int) -> list[str]:
    names = [n for b, n in {**_INFO_BITS, **_THROTTLE_BITS}.items() if mask & b]
    return names


def is_throttle(names: list[str]) -> bool:
    return any(n in _THROTTLE_BITS.values() for n in names)


class Telemetry:
    """Context manager sampling NVML every `period` seconds in a thread.

    Silently does nothing where NVML is missing: telemetry is context, not a result.
    """

    def __init__(self, pci_bus_id: str, period: float = 0.02):
        self.pci_bus_id = pci_bus_id
        self.period = period
        self.samples: list[dict] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._handle = None
        self._nvml = None
        try:
            import pynvml  # noqa: PLC0415

            pynvml.nvmlInit()
            self._handle = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id.encode())
            self._nvml = pynvml
        except Exception:
            self._handle = None

    def sample(self) -> dict | None:
        nv, h = self._nvml, self._handle
        if h is None:
            return None
        try:
            s = {
                "t": time.perf_counter(),
                "sm_mhz": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
                "mem_mhz": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
                "power_w": nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
                "temp_c": nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
            }
            get_reasons = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None) or nv.nvmlDeviceGetCurrentClocksThrottleReasons
            s["reasons"] = int(get_reasons(h))
        except Exception:
            return None
        return s

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            s = self.sample()
            if s:
                self.samples.append(s)

    def __enter__(self) -> Telemetry:
        s = self.sample()
        if s:
            self.samples.append(s)
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join()
        s = self.sample()
        if s:
            self.samples.append(s)

    def summary(self) -> dict | None:
        return summarize(self.samples)


def summarize(samples: list[dict]) -> dict | None:
    if not samples:
        return None

    def stats(key):
        vals = [s[key] for s in samples]
        return {"min": min(vals), "median": statistics.median(vals), "max": max(vals)}

    mask = 0
    for s in samples:
        mask |= s["reasons"]
    names = decode_reasons(mask)
    return {
        "samples": len(samples),
        "sm_mhz": stats("sm_mhz"),
        "mem_mhz": stats("mem_mhz"),
        "power_w": stats("power_w"),
        "temp_c": stats("temp_c"),
        "sm_mhz_start": samples[0]["sm_mhz"],
        "sm_mhz_end": samples[-1]["sm_mhz"],
        "reasons": names,
        "throttled": is_throttle(names),
    }


def merge_summaries(summaries: list[dict | None]) -> dict | None:
    """One summary from several (interleaved rounds): extremes over all, the median of the medians (the
    samples themselves are gone), every reason seen."""
    have = [s for s in summaries if s]
    if not have:
        return None

    def stats(key):
        return {"min": min(s[key]["min"] for s in have), "median": statistics.median(s[key]["median"] for s in have),
                "max": max(s[key]["max"] for s in have)}

    names = list(dict.fromkeys(n for s in have for n in s["reasons"]))
    return {
        "samples": sum(s["samples"] for s in have),
        **{key: stats(key) for key in ("sm_mhz", "mem_mhz", "power_w", "temp_c")},
        "sm_mhz_start": have[0].get("sm_mhz_start"),
        "sm_mhz_end": have[-1].get("sm_mhz_end"),
        "reasons": names,
        "throttled": is_throttle(names),
    }
