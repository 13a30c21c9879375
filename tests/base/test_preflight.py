"""Start-up names the problem: bad settings, folders, pack, stores and port, before training."""

import os
import socket
from pathlib import Path

import pytest
from typer.testing import CliRunner

from hermes_desk.cli.main import app
from hermes_desk.config import CLASSIFIER_KINDS, Settings
from hermes_desk.errors import ConfigError
from hermes_desk.preflight import check_port, check_settings


def _settings(tmp_path: Path, **service: object) -> Settings:
    return Settings.load(service={"data_dir": tmp_path / "data", **service})


@pytest.mark.parametrize(
    ("name", "value", "fragments"),
    [
        ("HERMES_SERVICE__API_KEYS", "acme", ["HERMES_SERVICE__API_KEYS", "service.api_keys"]),
        ("HERMES_LLM__CHAIN", "gpt-4o,offline", ["HERMES_LLM__CHAIN", "llm.chain"]),
        ("HERMES_NLU__CLASSIFIER", "bogus", ["nlu.classifier", "ensemble"]),
        ("HERMES_SERVICE__API_KEYS", '{"a": "acme"}', ["service.api_keys", "at least 16"]),
        ("HERMES_SERVICE__API_KEYS", '{"a-key-of-16-chars!": "ac me"}', ["tenant 'ac me'"]),
    ],
)
def test_bad_environment_names_the_variable_and_field(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, fragments: list[str]
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        Settings.load()
    for fragment in fragments:
        assert fragment in str(info.value)


def test_classifier_kinds_match_what_nlu_builds() -> None:
    from hermes_desk.nlu.intent import build_classifier

    for kind in CLASSIFIER_KINDS:
        assert build_classifier(kind) is not None


def test_good_settings_have_no_problem(tmp_path: Path) -> None:
    assert check_settings(_settings(tmp_path), stores=False) == []


def test_data_dir_that_is_a_file(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("not a folder")
    problems = check_settings(_settings(tmp_path), stores=False)
    assert [p.setting for p in problems] == ["service.data_dir"]
    assert "is a file, not a folder" in problems[0].message


def test_data_dir_that_is_not_writable(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        # Root writes through file modes; the kernel's /proc refuses new files even to root.
        locked = Path("/proc/1")
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
    try:
        settings = Settings.load(service={"data_dir": locked / "data"})
        problems = check_settings(settings, stores=False)
    finally:
        if locked.is_relative_to(tmp_path):
            locked.chmod(0o700)
    assert [p.setting for p in problems] == ["service.data_dir"]
    assert "not writable" in problems[0].message


def test_missing_pack_and_unreachable_store_are_all_reported(tmp_path: Path) -> None:
    settings = Settings.load(
        service={"data_dir": tmp_path, "pack": str(tmp_path / "no-pack")},
        sessions={"store": "redis", "redis_url": "redis://127.0.0.1:1/0"},
        memory={"store": "postgres", "postgres_dsn": "postgresql://127.0.0.1:1/test"},
    )
    problems = {p.setting: p.message for p in check_settings(settings)}
    assert set(problems) == {"service.pack", "sessions.redis_url", "memory.postgres_dsn"}
    assert "no such pack" in problems["service.pack"]
    assert "does not answer" in problems["sessions.redis_url"]


def test_store_password_never_printed(tmp_path: Path) -> None:
    settings = Settings.load(
        service={"data_dir": tmp_path},
        sessions={"store": "redis", "redis_url": "redis://:s3cret@127.0.0.1:1/0"},
    )
    (problem,) = check_settings(settings)
    assert "s3cret" not in str(problem) and "***" in str(problem)


def test_port_in_use_is_named() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        (problem,) = check_port("127.0.0.1", port)
    assert problem.setting == "service.port" and f"127.0.0.1:{port}" in problem.message
    assert check_port("127.0.0.1", port) == []


def test_serve_refuses_before_training(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("x")
    monkeypatch.setenv("HERMES_SERVICE__DATA_DIR", str(blocker))
    monkeypatch.setenv("HERMES_NLU__MODEL_DIR", str(tmp_path / "models"))
    result = CliRunner().invoke(app, ["serve", "--port", "1"])
    assert result.exit_code == 2
    assert "service.data_dir" in result.output
    assert not (tmp_path / "models").exists(), "nothing trained"


def test_config_check_lists_every_problem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "hermes.yaml"
    config.write_text(
        f"service:\n  data_dir: {tmp_path / 'f'}\n  pack: {tmp_path / 'nope'}\n"
        "llm:\n  mcp_servers:\n    - {name: files, command: [no-such-mcp-server-binary]}\n"
    )
    (tmp_path / "f").write_text("x")
    result = CliRunner().invoke(app, ["config", "check", str(config), "--no-stores"])
    assert result.exit_code == 2
    for setting in ("service.data_dir", "service.pack", "llm.mcp_servers[0].command"):
        assert setting in result.output
    good = tmp_path / "good.yaml"
    good.write_text(f"service:\n  data_dir: {tmp_path / 'd'}\n")
    ok = CliRunner().invoke(app, ["config", "check", str(good), "--no-stores"])
    assert ok.exit_code == 0, ok.output
