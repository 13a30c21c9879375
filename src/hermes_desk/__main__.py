"""``python -m hermes_desk`` is the ``hermes-desk`` command."""

from hermes_desk.cli.main import main

main()
