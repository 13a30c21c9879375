"""A served worker's process settings: the garbage collector and lean log records.

Each check runs in a process of its own: freezing is for good, and these tests must not change
the garbage collector or the logging module of the test run itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from hermes_desk.api.worker_tuning import YOUNG_THRESHOLD

_SERVE = textwrap.dedent(
    """
    import gc, json, sys
    import httpx
    from hermes_desk.api.app import create_app
    from hermes_desk.config import Settings
    from hermes_desk.testing.servers import serve_in_thread

    settings = Settings(
        service={"data_dir": sys.argv[1], "backend_url": "http://127.0.0.1:1"},
        workflows={"watchdog_interval_s": 3600},
    )
    before = gc.get_freeze_count(), gc.get_threshold()[0]
    with serve_in_thread(create_app(settings, settle_gc=sys.argv[2] == "1")) as url:
        status = httpx.get(url + "/healthz", timeout=30).status_code
        print(json.dumps({"before": before, "frozen": gc.get_freeze_count(),
                          "young": gc.get_threshold()[0], "status": status}))
    """
)


def _serve(tmp_path: Path, settle: bool) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _SERVE, str(tmp_path), "1" if settle else "0"],
        capture_output=True, text=True, timeout=300, env=os.environ.copy(),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_settled_worker_freezes_what_its_start_built(
    tmp_path: Path, pack_model_dir: Path
) -> None:
    result = _serve(tmp_path, settle=True)
    assert result["before"] == [0, 700]
    assert result["status"] == 200
    # The models, the pack, the routes and the libraries: far more than a bare interpreter's.
    assert isinstance(result["frozen"], int) and result["frozen"] > 50_000
    assert result["young"] == YOUNG_THRESHOLD


def test_an_app_built_without_settling_leaves_the_collector_alone(
    tmp_path: Path, pack_model_dir: Path
) -> None:
    result = _serve(tmp_path, settle=False)
    assert result["status"] == 200
    assert result["frozen"] == 0
    assert result["young"] == 700


_LOG = textwrap.dedent(
    """
    import io, json, logging
    from hermes_desk.api.access_log import log_config
    from hermes_desk.api.worker_tuning import lean_log_records

    lean_log_records()
    logging.config.dictConfig(log_config())
    stream = io.StringIO()
    handler = logging.getLogger("hermes_desk").handlers[0]
    handler.setStream(stream)
    seen = []
    keep = logging.Handler()
    keep.emit = seen.append
    logging.getLogger("hermes_desk").addHandler(keep)
    logging.getLogger("hermes_desk.events").info("card 6222020200112233445 used")
    record = seen[0]
    print(json.dumps({"line": stream.getvalue(), "thread": record.threadName,
                      "process": record.processName, "line_no": record.lineno}))
    """
)


def test_lean_log_records_skip_the_lookups_but_keep_the_line() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import logging.config\n" + _LOG],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["thread"] is None and result["process"] is None
    assert result["line_no"] == 0  # no caller lookup
    # The line is still formatted and still redacted by the handler's filter.
    assert " INFO hermes_desk.events: card " in result["line"]
    assert "6222020200112233445" not in result["line"]
    assert "3445" in result["line"]
