"""The demo business backend: sample users, orders, shipments and after-sales systems over HTTP.

A separate small web app that the e-commerce pack's tools call, with fault injection (latency,
error rate, hangs) per endpoint and a request log. Run it with
``python -m demo_backend --host 127.0.0.1 --port 8100``.
"""

from demo_backend.app import create_app
from demo_backend.faults import ENDPOINTS, WILDCARD, FaultConfig, FaultTable
from demo_backend.log import Outcome, RequestLog
from demo_backend.state import (
    FEATURES,
    BackendState,
    Refused,
    business_today,
    load_sample_data,
    read_captcha,
)

__all__ = [
    "ENDPOINTS",
    "FEATURES",
    "WILDCARD",
    "BackendState",
    "FaultConfig",
    "FaultTable",
    "Outcome",
    "Refused",
    "RequestLog",
    "business_today",
    "create_app",
    "load_sample_data",
    "read_captcha",
]
