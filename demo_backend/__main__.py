"""``python -m demo_backend --host 127.0.0.1 --port 8100 [--seed N]``."""

from __future__ import annotations

import argparse

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m demo_backend", description="Run the Hermes Desk demo business backend."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8100)
    parser.add_argument("--seed", type=int, default=None, help="seed for codes and fault rolls")
    parser.add_argument(
        "--require-verified-phone",
        action="store_true",
        help="accepted for compatibility: password changes always need an SMS-verified phone",
    )
    parser.add_argument(
        "--sample-dates",
        action="store_true",
        help="keep the sample data's dates as written (default: moved to today)",
    )
    parser.add_argument(
        "--data", default=None, help="JSON file with the data to start from (default: the sample)"
    )
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args(argv)

    import json
    from pathlib import Path

    import uvicorn

    from demo_backend.app import create_app
    from demo_backend.state import BackendState, business_today

    state = BackendState(
        seed=args.seed,
        require_verified_phone=args.require_verified_phone,
        today=None if args.sample_dates else business_today(),
        data=json.loads(Path(args.data).read_text(encoding="utf-8")) if args.data else None,
    )
    print(f"Hermes Desk demo backend on http://{args.host}:{args.port}", flush=True)
    uvicorn.run(create_app(state), host=args.host, port=args.port, log_level=args.log_level)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
