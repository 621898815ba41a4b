"""``python -m api.cli``: the same as the ``argweb`` command."""

from api.cli.main import main

main()
