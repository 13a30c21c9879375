from pathlib import Path

import pytest

from hermes_desk.config import Settings
from hermes_desk.errors import ConfigError


def test_defaults_carry_the_article_numbers() -> None:
    settings = Settings()
    assert settings.sessions.idle_ttl_s == 15 * 60
    assert settings.sessions.overlap_threshold == 0.3
    assert settings.tools.default_timeout_s == 3
    assert settings.tools.breaker.consecutive_timeouts == 3
    assert settings.tools.breaker.failures == 5
    assert settings.tools.breaker.open_s == 600
    assert settings.workflows.step_timeout_s == 10
    assert settings.memory.decay_lambda == 0.02
    assert settings.memory.archive_below == 0.3
    assert settings.memory.verify_interval_s == 300
    assert settings.service.request_timeout_s == 30
    assert settings.llm.chain == ["offline"]


def test_environment_overrides_nested_values(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HERMES_SESSIONS__IDLE_TTL_S", "60")
    monkeypatch.setenv("HERMES_TOOLS__BREAKER__FAILURES", "7")
    settings = Settings.load()
    assert settings.sessions.idle_ttl_s == 60
    assert settings.tools.breaker.failures == 7


def test_yaml_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "hermes.yaml"
    path.write_text("memory:\n  decay_lambda: 0.05\nllm:\n  chain: [openai/gpt-4o-mini]\n")
    settings = Settings.load(path)
    assert settings.memory.decay_lambda == 0.05
    assert settings.llm.chain == ["openai/gpt-4o-mini", "offline"], "offline is always last"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("sessions:\n  idle_ttl_s: -5\n", "sessions.idle_ttl_s"),
        ("sessions:\n  no_such_field: 1\n", "sessions.no_such_field"),
        ("tools:\n  breaker:\n    failures: many\n", "tools.breaker.failures"),
        ("- just\n- a list\n", "must hold a mapping"),
        ("memory: [unclosed\n", "not valid YAML"),
    ],
)
def test_invalid_settings_name_the_field(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        Settings.load(path)
    assert fragment in str(info.value)


def test_missing_settings_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        Settings.load(tmp_path / "absent.yaml")


def test_environment_wins_over_the_yaml_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "hermes.yaml"
    path.write_text("sessions:\n  idle_ttl_s: 120\n  sweep_interval_s: 5\n")
    monkeypatch.setenv("HERMES_SESSIONS__IDLE_TTL_S", "60")
    settings = Settings.load(path)
    assert settings.sessions.idle_ttl_s == 60
    assert settings.sessions.sweep_interval_s == 5
    assert Settings.load(path, sessions={"idle_ttl_s": 30}).sessions.idle_ttl_s == 30


def test_hermes_config_variable_names_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "hermes.yaml"
    path.write_text("nlu:\n  oos_threshold: 0.7\n")
    monkeypatch.setenv("HERMES_CONFIG", str(path))
    assert Settings.load().nlu.oos_threshold == 0.7
