"""The host probe: a fixed piece of work timed on one core, summed up per run. Nothing here
looks at how long anything took."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

import pytest

from hermes_desk.bench.host_probe import HostProbe, host_speed, reference_work


def test_the_summary_names_the_mean_the_fastest_tenth_and_their_ratio() -> None:
    speed = host_speed([2.0] * 9 + [1.0] + [2.0] * 9 + [1.0])
    assert speed == {
        "probe_samples": 20,
        "probe_ms_mean": 1.9,
        "probe_ms_fast": 1.0,
        "slowdown": 1.9,
    }
    assert host_speed([3.0])["slowdown"] == 1.0, "one sample is its own fastest tenth"


def test_no_samples_is_no_slowdown() -> None:
    assert host_speed([]) == {
        "probe_samples": 0,
        "probe_ms_mean": None,
        "probe_ms_fast": None,
        "slowdown": 1.0,
    }


def test_the_work_is_the_same_every_time() -> None:
    assert reference_work(3) == reference_work(3) > 0
    assert reference_work(6) > reference_work(3)


def test_the_probe_runs_on_its_core_and_gives_at_least_one_time_when_stopped() -> None:
    core = max(os.sched_getaffinity(0))
    probe = HostProbe(core)
    probe.start()
    pid = probe.pid
    assert pid is not None
    try:
        # The probe pins itself before it says it is ready.
        allowed = Path(f"/proc/{pid}/status").read_text().split("Cpus_allowed_list:")[1]
        assert allowed.split()[0] == str(core)
    finally:
        samples = probe.stop()
    assert samples and all(s > 0 for s in samples)
    assert not Path(f"/proc/{pid}").exists(), "stopped and reaped"
    assert probe.stop() == [], "a stopped probe has nothing more to give"


def test_a_probe_that_cannot_start_is_named() -> None:
    probe = HostProbe(core=10_000)  # no such core: the probe fails before it is ready
    with pytest.raises(RuntimeError, match="did not start"):
        probe.start()


def test_a_probe_that_does_not_answer_is_killed_not_left_running() -> None:
    probe = HostProbe(max(os.sched_getaffinity(0)))
    probe.start()
    pid = probe.pid
    assert pid is not None
    os.kill(pid, signal.SIGSTOP)  # a stopped process never answers the request to stop
    with pytest.raises(subprocess.TimeoutExpired):
        probe.stop(timeout_s=0.2)
    assert not Path(f"/proc/{pid}").exists(), "killed and reaped"
    assert probe.stop() == []
