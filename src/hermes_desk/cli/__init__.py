"""The ``hermes-desk`` command line: one module per command group."""
