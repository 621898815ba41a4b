"""The ``argweb`` command line: one module per command group, assembled by :mod:`api.cli.main`."""
