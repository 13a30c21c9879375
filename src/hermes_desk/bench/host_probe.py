"""How fast the measured core ran while a figure was taken.

On the machines these figures come from (two-core guests on a shared host) one fixed piece of
Python costs about 1.7 times more CPU time in some seconds than in others, with nothing changed
in the guest: its times fall into two groups (docs/benchmarks.md, "The host's two speeds"), and
a worker's CPU per turn moves with them. :class:`HostProbe` times a fixed piece of work
(:func:`reference_work`: JSON, a regular expression, dicts, a sort, strings) five times a second
on the worker's core while the turns run, and :func:`host_speed` sums its times up, so each
figure says which speed it was taken at. It describes the run; it corrects nothing: measured,
the worker slows by a different factor than the probe does, so no figure is divided by it.

The probe takes about 1 % of the core and its CPU is not the worker's.
"""

from __future__ import annotations

import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from collections import Counter
from typing import Any

__all__ = ["HostProbe", "host_speed", "reference_work"]

_WORD = re.compile(r"[a-z]+|\d+")


def reference_work(rounds: int = 8) -> int:
    """A fixed amount of the kind of work a turn does, with nothing read from outside."""
    total = 0
    for i in range(rounds):
        record = {
            f"key{j}": {"n": j * i, "s": f"order {j} of {i}", "l": [j, i, "x"]} for j in range(40)
        }
        text = json.dumps(record, ensure_ascii=False)
        back = json.loads(text)
        total += len(Counter(_WORD.findall(text))) + len(back)
        ordered = sorted(back.items(), key=lambda kv: -kv[1]["n"])
        joined = " ".join(v["s"] for _, v in ordered)
        total += len(joined.split()) + joined.count("of")
    return total


def host_speed(samples_ms: list[float]) -> dict[str, Any]:
    """The probe's times summed up: their mean, the mean of the fastest tenth (at least one),
    and the first over the second (1.0 with no samples): near 1, the run saw one speed."""
    if not samples_ms:
        return {"probe_samples": 0, "probe_ms_mean": None, "probe_ms_fast": None, "slowdown": 1.0}
    ordered = sorted(samples_ms)
    fast = statistics.fmean(ordered[: max(1, len(ordered) // 10)])
    mean = statistics.fmean(ordered)
    return {
        "probe_samples": len(ordered),
        "probe_ms_mean": round(mean, 3),
        "probe_ms_fast": round(fast, 3),
        "slowdown": round(mean / fast, 3),
    }


class HostProbe:
    """The probe in a process of its own on ``core``: ``start``, then ``stop`` gives its times
    (milliseconds of its thread's CPU per piece of work; at least one, however short the run)."""

    def __init__(self, core: int, *, period_s: float = 0.2) -> None:
        self.core = core
        self.period_s = period_s
        self._proc: subprocess.Popen[str] | None = None

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def start(self) -> None:
        proc = subprocess.Popen(
            [sys.executable, "-m", __name__, str(self.core), str(self.period_s)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        ready = proc.stdout.readline()  # after its warm-up, before the first sample
        if ready.strip() != "ready":
            proc.kill()
            _, err = proc.communicate()
            last = err.strip().splitlines()[-1] if err.strip() else "no output"
            raise RuntimeError(f"the host probe did not start on core {self.core}: {last}")
        self._proc = proc

    def stop(self, *, timeout_s: float = 60.0) -> list[float]:
        """The probe's times; a probe that does not answer within ``timeout_s`` is killed (it
        must not go on running on the worker's core) and TimeoutExpired raised."""
        proc, self._proc = self._proc, None
        if proc is None:
            return []
        proc.send_signal(signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
        return [float(x) for x in json.loads(out or "[]")]


def _main(core: int, period_s: float) -> None:
    os.sched_setaffinity(0, {core})
    stopping = False

    def stop(*_: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    reference_work(40)
    print("ready", flush=True)

    def sample() -> float:
        began = time.thread_time()
        reference_work()
        return round((time.thread_time() - began) * 1000, 4)

    samples: list[float] = []
    while not stopping:
        time.sleep(period_s)
        samples.append(sample())
    print(json.dumps(samples or [sample()]), flush=True)


if __name__ == "__main__":
    _main(int(sys.argv[1]), float(sys.argv[2]))
