"""argweb benchmarks: run ``make bench`` (``python -m bench.all``); see :mod:`bench.harness`."""
