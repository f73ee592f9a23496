"""Tables and text for a fleet document (from the merged JSON only; no GPU needed).

node_table: one row per GPU across hosts, each figure as % of the fleet median, clocks,
power, temperature, clock reasons, ECC counts and a flag. outlier_table: what fell
behind and the telemetry that may explain it. link_tables: per host, the link kind and
theoretical rate, copy-engine and SM-copy matrices (one direction, both directions),
pinned host↔device. allreduce_tables: bus bandwidth against message size.

Everything comes from the document (its "figures" list names the table's columns, its
"references" the figures measured elsewhere), so a saved fleet.json renders anywhere.
"""

from __future__ import annotations

from rooflab.report.table import Table


def _fleet(doc: dict) -> dict:
    return doc.get("fleet", doc)


def _torch_ref(f: dict) -> dict:
    return (f.get("references") or {}).get("torch_2xh200") or {}


def reference_text(f: dict) -> str | None:
    r = _torch_ref(f)
    if not r:
        return None
    ar = r.get("allreduce_busbw_gbs") or {}
    return (f"Reference ({r.get('source')}; {r.get('date')}): peer copy {r.get('peer_ce_uni_gbs'):.0f} GB/s each "
            f"way, {r.get('peer_ce_bidir_gbs'):.0f} GB/s both ways at once; pinned host↔device "
            f"{r.get('pinned_h2d_d2h_gbs'):.0f} GB/s; all-reduce bus bandwidth "
            + ", ".join(f"{v:.0f} GB/s at {size_label(int(k))}" for k, v in ar.items()) + ".")


def size_label(nbytes: int) -> str:
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= div and nbytes % div == 0:
            return f"{nbytes // div} {unit}"
    return f"{nbytes} B"


def _num(v: float | None, unit: str) -> str | None:
    if v is None:
        return None
    return f"{v:,.0f}" if unit == "GB/s" else f"{v:,.1f}"


def _short_uuid(u: str | None) -> str | None:
    if not u:
        return None
    return u[:12] + "…" if len(u) > 13 else u


def gpu_label(g: dict) -> str:
    return f"GPU{g.get('index')}"


def node_table(doc: dict) -> Table:
    f = _fleet(doc)
    gpus = list((f.get("gpus") or {}).values())
    med = f.get("medians") or {}
    figs = [tuple(x) for x in f.get("figures") or []]
    figs = [x for x in figs if x[0] != "bf16_tflops" or any(g["summary"].get("bf16_tflops") for g in gpus)]
    flagged: dict[str, list[str]] = {}
    for o in f.get("outliers") or []:
        tag = o["title"].split()[0] + (" (baseline)" if o["against"] == "baseline" else "")
        flagged.setdefault(o["uuid"], []).append(tag)
    cols = ["host", "GPU", "UUID", "serial"] + [t for _k, t, _u in figs] + \
        ["SM MHz load / max", "W max / limit", "°C max", "clock reasons", "ECC corr / uncorr", "flag"]
    rows = []
    for g in gpus:
        s = g["summary"]
        t, e = s.get("telemetry") or {}, s.get("ecc") or {}
        cells = []
        for key, _title, unit in figs:
            v, m = s.get(key), med.get(key)
            cells.append(None if v is None else f"{_num(v, unit)} ({100 * v / m:.1f}%)" if m else _num(v, unit))
        sm = t.get("sm_mhz_load")
        rows.append([g.get("host"), gpu_label(g), _short_uuid(g.get("uuid")), g.get("serial"), *cells,
                     f"{sm:.0f} / {t['sm_mhz_max_clock']:.0f}" if sm and t.get("sm_mhz_max_clock") else
                     (f"{sm:.0f}" if sm else None),
                     (f"{t['power_w_max']:.0f} / {t['power_limit_w']:.0f}" if t.get("power_limit_w") else
                      f"{t['power_w_max']:.0f}") if t.get("power_w_max") is not None else None,
                     f"{t['temp_c_max']:.0f}" if t.get("temp_c_max") is not None else None,
                     ", ".join(t.get("reasons") or []) or "none",
                     f"{e.get('corrected_volatile')} / {e.get('uncorrected_volatile')}"
                     if e.get("corrected_volatile") is not None else None,
                     "OUTLIER: " + ", ".join(flagged[g["uuid"]]) if g["uuid"] in flagged else "ok"])
    if len(gpus) > 1:
        rows.append(["median", "", "", "", *[_num(med.get(k), u) for k, _t, u in figs], "", "", "", "", "", ""])
    pct = (f.get("config") or {}).get("outlier_pct", 5.0)
    notes = [(f"Each figure as % of the fleet median; a GPU more than {pct:g}% below it (or below the baseline, "
              "where one is given) is an OUTLIER."),
             ("copy: best verified device-to-device copy; FMA: best FP32 FMA-chain run; SGEMM: cuBLAS FP32; "
              "BF16 (where measured): best passed GEMM rung of precision bf16."),
             ("Clocks, power, temperature and clock reasons: NVML samples during the timed runs (SM MHz: median "
              "under the FMA and cuBLAS runs); ECC: volatile counts (since the driver loaded) after the run.")]
    if len(gpus) == 2:
        notes.append(f"With two GPUs the median is their mean: one is flagged only when it trails the other by "
                     f"more than {200 * pct / (100 + pct):.1f}%.")
    return Table("GPUs: each figure as % of the fleet median", cols, rows, notes, key="fleet_gpus")


def outlier_table(doc: dict) -> Table | None:
    f = _fleet(doc)
    outs = f.get("outliers") or []
    if not outs:
        return None
    rows = []
    for o in outs:
        rows.append([o.get("host"), f"GPU{o.get('index')}", o["title"], _num(o["value"], o["unit"]),
                     _num(o["reference"], o["unit"]), f"{o['pct_of_reference']:.1f}%", o["against"],
                     "; ".join(o.get("explanations") or []) or ("nothing in the telemetry (clocks at maximum, no "
                                                                 "clock reasons, no ECC errors): look at the card, "
                                                                 "its cooling and its slot")])
    return Table("Outliers", ["host", "GPU", "figure", "value", "reference", "% of reference", "against",
                              "what may explain it"], rows, key="fleet_outliers")


def _gbs_cell(r: dict | None, theo: float | None) -> str | None:
    if not r:
        return None
    if not r.get("verified"):
        return "FAILED"
    g = r.get("gbs")
    if g is None:
        return None
    if not theo:
        return f"{g:,.0f}"
    pct = 100 * g / theo
    return f"{g:,.0f} ({pct:.0f}%{' !' if pct > 110 else ''})"


_TOO_FAST = ("'!': faster than the theoretical rate of the link NVML reports, so the link kind is probably "
             "misreported (e.g. NVLink hidden from NVML inside a VM)")


def _flag_too_fast(t: Table) -> Table:
    if any(isinstance(c, str) and c.endswith("!)") for row in t.rows for c in row):
        t.notes.append(_TOO_FAST)
    return t


def _matrix(title: str, labels: list[str], cell, notes: list[str], key: str) -> Table:
    n = len(labels)
    rows = [[f"from {labels[i]}"] + ["—" if i == j else cell(i, j) for j in range(n)] for i in range(n)]
    return Table(title, ["from \\ to"] + labels, rows, notes, key=key)


def link_tables(doc: dict) -> list[Table]:
    f = _fleet(doc)
    out = []
    for host, sec in (f.get("links") or {}).items():
        if not sec or not sec.get("devices"):
            continue
        devs = sec["devices"]
        labels = [f"GPU{d.get('index')}" for d in devs]
        link = {(p["src"], p["dst"]): p["link"] for p in sec.get("pairs") or []}

        def theo(i, j, link=link):
            return (link.get((i, j)) or {}).get("theoretical_gbs")

        mb = sec.get("config", {}).get("nbytes", 0) / 2**20
        if len(devs) > 1:
            out.append(_matrix(f"{host}: link between GPUs (NVML) and theoretical GB/s per direction", labels,
                               lambda i, j, link=link: f"{link[(i, j)]['label']} · {link[(i, j)]['theoretical_gbs']:.0f}"
                               if (i, j) in link and link[(i, j)].get("theoretical_gbs") else
                               (link.get((i, j)) or {}).get("label"),
                               sorted({lk["basis"] for lk in link.values() if lk.get("basis")}), "links_kind"))
            for kind, name in (("ce", "copy engine (cudaMemcpyPeerAsync)"),
                               ("sm", "SM copy (kernel on the destination reads the source)")):
                uni = {(r["src"], r["dst"]): r for r in sec.get(f"{kind}_uni") or []}
                if uni:
                    out.append(_matrix(f"{host}: {name}, one direction, GB/s (% of theoretical)", labels,
                                       lambda i, j, uni=uni, theo=theo: _gbs_cell(uni.get((i, j)), theo(i, j)),
                                       [(f"{mb:.0f} MiB per copy; median of {sec.get('config', {}).get('reps')} "
                                         "reps; every copy checked byte for byte before timing")],
                                       f"links_{kind}_uni"))
                bi = {}
                for r in sec.get(f"{kind}_bidir") or []:
                    bi[(r["a"], r["b"])] = bi[(r["b"], r["a"])] = r
                if bi:
                    out.append(_matrix(f"{host}: {name}, both directions at once, GB/s in total "
                                       "(% of 2 × theoretical)", labels,
                                       lambda i, j, bi=bi, theo=theo: _gbs_cell(
                                           bi.get((i, j)), 2 * theo(i, j) if theo(i, j) else None),
                                       ["time of the slower direction; bytes of both directions"],
                                       f"links_{kind}_bidir"))
        host_rows = []
        for h in sec.get("host") or []:
            lk = h.get("link") or {}
            t = lk.get("theoretical_gbs")
            host_rows.append([labels[h["device"]], _gbs_cell(h.get("h2d"), t), _gbs_cell(h.get("d2h"), t),
                              lk.get("label"), f"{t:.1f}" if t else None])
        if host_rows:
            out.append(Table(f"{host}: pinned host memory ↔ GPU, GB/s (% of the PCIe link)",
                             ["GPU", "host → GPU", "GPU → host", "link (max)", "theoretical GB/s"], host_rows,
                             [f"{mb:.0f} MiB per copy, cudaMemcpyAsync, pinned host memory, one GPU at a time"],
                             key="links_host"))
        tp = (f.get("torch_peer") or {}).get(host)
        if tp and tp.get("available"):
            rows = [[f"GPU{devs[r['src']]['index']} → GPU{devs[r['dst']]['index']}" if r["src"] < len(devs) else
                     f"{r['src']} → {r['dst']}", _gbs_cell(r, theo(r["src"], r["dst"]))] for r in tp.get("uni") or []]
            rows += [[f"GPU{devs[r['a']]['index']} ↔ GPU{devs[r['b']]['index']}" if r["b"] < len(devs) else
                      f"{r['a']} ↔ {r['b']}",
                      _gbs_cell(r, 2 * theo(r["a"], r["b"]) if theo(r["a"], r["b"]) else None)]
                     for r in tp.get("bidir") or []]
            out.append(Table(f"{host}: PyTorch tensor.copy_ between GPUs, same run (peer figure)",
                             ["copy", "GB/s (% of theoretical)"], rows, [tp.get("method", ""),
                                                                         f"torch {tp.get('torch_version')}"],
                             key="links_torch"))
        elif tp:
            out.append(Table(f"{host}: PyTorch peer copy", ["status"], [[tp.get("reason") or tp.get("error")]],
                             key="links_torch"))
    out = [_flag_too_fast(t) for t in out]
    ref = reference_text(f)
    if out and ref:
        out[-1].notes.append(ref)
    return out


def allreduce_tables(doc: dict) -> list[Table]:
    f = _fleet(doc)
    out = []
    ref = _torch_ref(f).get("allreduce_busbw_gbs") or {}
    for host, sec in (f.get("allreduce") or {}).items():
        if not sec:
            continue
        if not sec.get("available"):
            out.append(Table(f"{host}: all-reduce", ["status"], [[sec.get("reason") or "NCCL not available"]],
                             key="allreduce"))
            continue
        rows = []
        for r in sec.get("rows") or []:
            refv = ref.get(str(r["bytes"]))
            if not r.get("verified"):
                rows.append([size_label(r["bytes"]), None, None, "FAILED", r.get("error") or "wrong sum", None])
                continue
            rows.append([size_label(r["bytes"]), f"{r['time_us']:,.1f}", f"{r['algbw_gbs']:,.1f}",
                         f"{r['busbw_gbs']:,.1f}", "ok" if r.get("verified_after") in (True, None) else "CHANGED",
                         f"{refv:.0f}" if refv else None])
        env = sec.get("env") or {}
        notes = [(f"{sec.get('backend')}, NCCL {sec.get('nccl_version')}, {sec.get('ranks')} ranks; "
                  f"NCCL_NVLS_ENABLE={env.get('NCCL_NVLS_ENABLE')}"),
                 ("algbw = bytes / time; busbw = algbw × 2(n−1)/n (nccl-tests); float32 sum, median of reps, "
                  "every size checked on every GPU"),
                 f"reference column: {_torch_ref(f).get('source') or 'none'}"]
        notes += [f"error: {e}" for e in sec.get("errors") or []]
        out.append(Table(f"{host}: NCCL all-reduce bus bandwidth", ["size", "time µs", "algbw GB/s", "busbw GB/s",
                                                                    "check", "torch busbw (ref)"], rows, notes,
                         key="allreduce"))
    return out


def tables(doc: dict) -> list[Table]:
    out = [node_table(doc)]
    o = outlier_table(doc)
    if o:
        out.append(o)
    return out + link_tables(doc) + allreduce_tables(doc)


def paragraphs(doc: dict) -> list[tuple[str, str]]:
    f = _fleet(doc)
    gpus = list((f.get("gpus") or {}).values())
    hosts = sorted({str(g.get("host")) for g in gpus})
    outs = f.get("outliers") or []
    pct = (f.get("config") or {}).get("outlier_pct", 5.0)
    if outs:
        names = sorted({f"{o['host']} GPU{o['index']}" for o in outs})
        verdict = f"{len(names)} outlier GPU(s) (more than {pct:g}% below the reference): {', '.join(names)}."
    elif len(gpus) > 1:
        verdict = f"No GPU is more than {pct:g}% below the fleet median on any figure."
    else:
        verdict = "One GPU: nothing to compare it with" + (" but the baseline." if (f.get("config") or {}).get(
            "baseline") else ".")
    paras = [("Fleet", f"{len(gpus)} GPU(s) on {len(hosts)} host(s) ({', '.join(hosts)}). {verdict}")]
    errs = f.get("errors") or []
    if errs:
        paras.append(("Problems", " ".join(f"({i + 1}) {e}" for i, e in enumerate(errs))))
    return paras


def markdown(doc: dict) -> str:
    f = _fleet(doc)
    when = f"{doc.get('created', '')} · `{doc.get('command', '')}` · launch: {(f.get('launch') or {}).get('mode')}"
    head = ["# rooflab fleet report", "", when, ""]
    body = [t.to_markdown() for t in tables(doc)]
    paras = [f"**{title}.** {text}\n" for title, text in paragraphs(doc)]
    return "\n".join(head + paras + body)
