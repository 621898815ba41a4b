"""Recipes that were measured and not adopted, as scripts on argweb's public API.

Not part of the installed package (like PyG's ``examples/``): run them from a checkout, e.g.
``python -m experiments.marg_cv``. Each script's docstring says what it measured and where its
figures are recorded (``docs/experiments/*.md``, ``docs/models/*.md``).
"""
