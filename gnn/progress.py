"""Where model work reports its progress: :mod:`ontology.progress`, the one progress protocol.

Model code imports :class:`~ontology.progress.Progress` and the helpers from here or from
:mod:`ontology.progress` (they are the same objects): the callback given, or the one the caller
set for a block of work with :func:`reporting_to`.
"""

from __future__ import annotations

from ontology.progress import Progress, each, reporting_to, resolve

__all__ = ["Progress", "each", "reporting_to", "resolve"]
