"""The kill test, small: SIGKILL the real service mid-workflow, restart it, finish everything."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


# A busy machine slows the ten workflows' many restarts: a roomy limit, never a timing check. A
# kill waits for work done since the start, and a run that stops moving reports what it left.
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_workflows_survive_sigkill_without_running_a_step_twice(tmp_path: Path) -> None:
    run = subprocess.run(
        [
            sys.executable, str(ROOT / "scripts" / "kill_test.py"), "-n", "10",
            "--kill-min", "0.2", "--kill-max", "0.8", "--workdir", str(tmp_path),
        ],
        capture_output=True, text=True, timeout=840, cwd=ROOT,
    )  # fmt: skip
    report = json.loads(run.stdout)
    assert not report["stalled"], report["left_unfinished"]
    assert report["workflows_finished"] == 10
    assert report["stuck"] == []
    assert report["writes_executed_twice"] == {}
    assert report["kills"] >= 1 and report["service_starts"] == report["kills"] + 1
    assert set(report["statuses"]) <= {
        f"{name}:{status}"
        for name in ("password_reset", "return_refund")
        for status in ("completed", "failed", "escalated")
    }
    assert run.returncode == 0, run.stderr[-2000:]
