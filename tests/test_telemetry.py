from rooflab.cuda.telemetry import decode_reasons, is_throttle, summarize


def test_summary_of_samples():
    samples = [{"t": 0, "sm_mhz": 1980, "mem_mhz": 3201, "power_w": 300.0, "temp_c": 40, "reasons": 0},
               {"t": 1, "sm_mhz": 1755, "mem_mhz": 3201, "power_w": 690.0, "temp_c": 55, "reasons": 0x4}]
    s = summarize(samples)
    assert s["sm_mhz"] == {"min": 1755, "median": 1867.5, "max": 1980}
    assert s["sm_mhz_start"] == 1980 and s["sm_mhz_end"] == 1755
    assert s["reasons"] == ["sw_power_cap"] and s["throttled"]
    assert summarize([]) is None


def test_idle_is_not_throttling():
    assert decode_reasons(0x1) == ["gpu_idle"]
    assert not is_throttle(decode_reasons(0x1))
    assert is_throttle(decode_reasons(0x40))
