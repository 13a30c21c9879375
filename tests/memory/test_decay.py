from __future__ import annotations

import math

import pytest

from hermes_desk.memory.decay import FOREVER, DecayPolicy, decayed, half_life_hours, threshold_time

HOUR = 3600.0


def test_half_life_is_about_34_7_hours_for_lambda_0_02() -> None:
    assert half_life_hours(0.02) == pytest.approx(34.657, abs=1e-3)
    assert decayed(1.0, 0.0, half_life_hours(0.02) * HOUR, 0.02) == pytest.approx(0.5)


def test_decay_runs_from_last_confirmation_and_never_grows() -> None:
    policy = DecayPolicy(0.02, 0.3)
    assert policy.decayed(0.9, 1000.0, 1000.0) == 0.9
    assert policy.decayed(0.9, 1000.0, 1000.0 + 10 * HOUR) == pytest.approx(0.9 * math.exp(-0.2))
    # a clock reading before the confirmation must not raise confidence above its base
    assert policy.decayed(0.9, 1000.0, 0.0) == 0.9


def test_threshold_time_is_where_decay_meets_the_threshold() -> None:
    at = threshold_time(0.9, 0.0, 0.02, 0.3)
    assert at / HOUR == pytest.approx(math.log(3) / 0.02)
    assert decayed(0.9, 0.0, at, 0.02) == pytest.approx(0.3)
    assert threshold_time(0.2, 50.0, 0.02, 0.3) == 50.0
    assert threshold_time(0.9, 0.0, 0.02, 0.0) == FOREVER
