"""Hermes Desk: an engineering-first agent runtime for customer service.

The service is :func:`hermes_desk.api.app.create_app`, the wiring :func:`hermes_desk.runtime.
build_runtime`; each module is a subpackage (``sessions``, ``nlu``, ``tools``, ``workflows``,
``memory``, ``llm``, ``packs``). Importing this package loads no optional dependency.
"""

from hermes_desk.config import Settings
from hermes_desk.errors import HermesError

__version__ = "0.1.0"

__all__ = ["HermesError", "Settings", "__version__"]
