"""How GPUs are connected and what each connection can carry (pure arithmetic).

Per direction, in GB/s (1e9 bytes/s):

- NVLink: active links between the two GPUs x the per-link rate of the generation.
  NVLink4 (H100/H200) signals at 26.5625 GB/s per link per direction (2 lanes x
  106.25 Gbit/s), so NV18 = 478.1 GB/s; NVIDIA's "900 GB/s" is 18 x 25 GB/s x 2
  directions of payload (450 per direction). Behind NVSwitch every pair gets the
  smaller of the two GPUs' active link counts.
- PCIe: lanes x the per-lane rate after line encoding (gen3 128b/130b: 0.985 GB/s;
  gen5 x16 = 63.0 GB/s).
"""

from __future__ import annotations

NVLINK_GBS_PER_LINK = {1: 20.0, 2: 25.0, 3: 25.0, 4: 26.5625, 5: 50.0}
NVLINK_GEN_BY_ARCH = {"Pascal": 1, "Volta": 2, "Ampere": 3, "Hopper": 4, "Blackwell": 5}
NVLINK_GEN_BY_CC_MAJOR = {6: 1, 7: 2, 8: 3, 9: 4, 10: 5}
# nvmlNvlinkVersion_t: 1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0, 7 = 5.0, 8 = 6.0
NVLINK_GEN_BY_NVML_VERSION = {1: 1, 2: 2, 3: 2, 4: 3, 5: 3, 6: 4, 7: 5}
PCIE_GBS_PER_LANE = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
_SWITCH = 2  # nvmlNvLinkDeviceType for an NVSwitch


def nvlink_gen(*, arch: str | None = None, cc_major: int | None = None, nvml_version: int | None = None) -> int | None:
    """The NVLink generation: from the architecture where known (NVML's version field
    changed meaning across drivers), else from NVML's nvmlNvlinkVersion_t."""
    if arch in NVLINK_GEN_BY_ARCH:
        return NVLINK_GEN_BY_ARCH[arch]
    if cc_major in NVLINK_GEN_BY_CC_MAJOR:
        return NVLINK_GEN_BY_CC_MAJOR[cc_major]
    return NVLINK_GEN_BY_NVML_VERSION.get(nvml_version) if nvml_version else None


def nvlink_gbs(links: int, gen: int | None) -> float | None:
    """Theoretical NVLink GB/s per direction for `links` links of generation `gen`."""
    per = NVLINK_GBS_PER_LINK.get(gen) if gen else None
    return links * per if per and links else None


def pcie_gbs(gen: int | None, width: int | None) -> float | None:
    """Theoretical PCIe GB/s per direction."""
    per = PCIE_GBS_PER_LANE.get(gen) if gen else None
    return per * width if per and width else None


def host_link(inv: dict | None) -> dict:
    """A GPU's PCIe link to the host: generation and width at their maximum (an idle link
    trains down to save power), theoretical GB/s per direction."""
    p = (inv or {}).get("pcie") or {}
    gen, width = p.get("gen_max") or p.get("gen"), p.get("width_max") or p.get("width")
    return {"type": "PCIe", "gen": gen, "width": width, "label": f"PCIe gen{gen} x{width}" if gen and width else "PCIe",
            "theoretical_gbs": pcie_gbs(gen, width), "current": {"gen": p.get("gen"), "width": p.get("width")}}


def classify_pair(a: dict | None, b: dict | None, *, arch: str | None = None, cc_major: int | None = None,
                  p2p: dict | None = None) -> dict:
    """How GPU a reaches GPU b (inventory entries from `inventory.read_all`), and the
    theoretical GB/s per direction."""
    a, b, p2p = a or {}, b or {}, p2p or {}
    la = (a.get("nvlink") or {}).get("links") or []
    lb = (b.get("nvlink") or {}).get("links") or []
    versions = [x["version"] for x in la if x.get("active") and x.get("version")]
    gen = nvlink_gen(arch=arch, cc_major=cc_major, nvml_version=max(versions) if versions else None)
    direct = sum(1 for x in la if x.get("active") and x.get("remote_bus_id") and
                 x["remote_bus_id"] == b.get("pci_bus_id"))
    if direct:
        return {"type": "NVLink", "label": f"NV{direct}", "links": direct, "gen": gen,
                "theoretical_gbs": nvlink_gbs(direct, gen),
                "basis": f"{direct} direct NVLink{gen or '?'} links x {NVLINK_GBS_PER_LINK.get(gen, '?')} GB/s"}
    act_a = sum(1 for x in la if x.get("active"))
    act_b = sum(1 for x in lb if x.get("active"))
    sw_a = sum(1 for x in la if x.get("active") and x.get("remote_type") == _SWITCH)
    sw_b = sum(1 for x in lb if x.get("active") and x.get("remote_type") == _SWITCH)
    if (sw_a and sw_b) or (p2p.get("nvlink") and act_a and act_b):
        n = min(sw_a or act_a, sw_b or act_b)
        return {"type": "NVLink (NVSwitch)", "label": f"NV{n}", "links": n, "gen": gen,
                "theoretical_gbs": nvlink_gbs(n, gen),
                "basis": f"through NVSwitch: min of the two GPUs' active links ({sw_a or act_a}, {sw_b or act_b}) "
                         f"x {NVLINK_GBS_PER_LINK.get(gen, '?')} GB/s (NVLink{gen or '?'})"}
    ha, hb = host_link(a), host_link(b)
    gbs = [x for x in (ha["theoretical_gbs"], hb["theoretical_gbs"]) if x]
    slower = ha if not hb["theoretical_gbs"] or (ha["theoretical_gbs"] or 0) <= hb["theoretical_gbs"] else hb
    return {"type": "PCIe", "label": slower["label"], "links": 0, "gen": slower["gen"],
            "theoretical_gbs": min(gbs) if gbs else None,
            "basis": f"no NVLink between them: the slower PCIe link ({slower['label']}); path: "
                     f"{p2p.get('common_ancestor') or 'unknown'}"}
