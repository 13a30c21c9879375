"""Process settings for a long-running worker (``hermes-desk serve``): the garbage collector
and the log records.

**The garbage collector.** A started worker holds a few hundred thousand long-lived objects:
the intent and sentiment models, the pack, the routes, the imported libraries. With CPython's
default thresholds (700, 10, 10) a young collection runs every 700 net allocations and every
full collection walks all of those objects again: about 150 ms each on a two-core machine, two
in a 600-conversation ``bench turn-cpu`` run, beside some 200 young and 20 middle ones (about
half a second of CPU in all, 5 % of the run; measured with ``gc.callbacks``).
:func:`settle_after_start` moves what the start built into the permanent generation
(:func:`gc.freeze`, which exists for objects that live as long as the process) so no collection
walks it again, and runs young collections every :data:`YOUNG_THRESHOLD` net allocations.
Reference counting still frees almost everything at once; only reference cycles wait for a
collection, and a request leaves few (about 40 net allocations).

**Log records.** Every event is a log line (three or four per turn). By default each record
looks up its caller's file and line, the thread, the process and the multiprocessing name,
none of which the service's format prints: :func:`lean_log_records` turns those lookups off,
the switches the ``logging`` HOWTO names for this ("Optimization").

Only ``serve`` does this: a process that builds many services (a test run) would keep every
frozen object for good.
"""

from __future__ import annotations

import gc
import logging

__all__ = ["YOUNG_THRESHOLD", "lean_log_records", "settle_after_start"]

#: Net allocations between young collections (CPython's default is 700): a collection every few
#: hundred requests, each of a few milliseconds at most.
YOUNG_THRESHOLD = 10_000


def settle_after_start() -> None:
    """Collect once, freeze what is left, and raise the young threshold (module docstring)."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)


def lean_log_records() -> None:
    """Log records without the caller's file and line, thread, process or multiprocessing
    name (the service's log format shows none of them)."""
    logging._srcfile = None  # the HOWTO's documented switch for the caller lookup
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
