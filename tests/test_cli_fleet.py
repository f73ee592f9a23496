"""The `rooflab fleet` commands."""

from __future__ import annotations

import json


from rooflab.errors import UsageError

from fleet_fixtures import fake_node, h200  # noqa: F401 (pytest fixtures)


# ---------------------------------------------------------------- the command line

LAUNCH_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID")


def test_cli_report_and_merge(fake_node, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from rooflab.cli import fleet as cli_fleet

    for k in LAUNCH_VARS:
        monkeypatch.delenv(k, raising=False)
    root = tmp_path / "f"
    res = CliRunner().invoke(cli_fleet.fleet, ["report", "--devices", "0,1", "--out", str(root), "--quick",
                                               "--link-size", "64M", "--ar-max", "256M"])
    assert res.exit_code == 0, res.output
    assert "GPUs: each figure as % of the fleet median" in res.output and "OUTLIER" in res.output
    links_call = next(c for c, _ in fake_node.calls if c[3] == "node-links")
    assert links_call[links_call.index("--size") + 1] == str(64 * 2**20)
    ar_call = next(c for c, _ in fake_node.calls if c[3] == "node-allreduce")
    assert ar_call[ar_call.index("--max") + 1] == str(256 * 2**20) and ar_call[ar_call.index("--factor") + 1] == "4"
    res = CliRunner().invoke(cli_fleet.fleet, ["merge", str(root), "--outlier-pct", "20", "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads((root / "fleet.json").read_text())["fleet"]["outliers"] == []
    res = CliRunner().invoke(cli_fleet.fleet, ["merge", str(root), "--fail-on-outlier", "--outlier-pct", "1"])
    assert res.exit_code == 1


def test_cli_refuses_devices_under_a_launcher(fake_node, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from rooflab.cli import fleet as cli_fleet

    for k, v in {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0"}.items():
        monkeypatch.setenv(k, v)
    res = CliRunner().invoke(cli_fleet.fleet, ["report", "--devices", "all", "--shared-dir", str(tmp_path)])
    assert isinstance(res.exception, UsageError) and "--devices" in str(res.exception)
    res = CliRunner().invoke(cli_fleet.fleet, ["report", "--link-size", "100", "--out", str(tmp_path)])
    assert isinstance(res.exception, UsageError)
    assert fake_node.calls == []  # bad input is refused before anything starts


def test_the_fleet_group_is_a_command_of_rooflab():
    from rooflab.cli import cli

    assert {"report", "merge", "links", "allreduce"} <= set(cli.commands["fleet"].commands)
