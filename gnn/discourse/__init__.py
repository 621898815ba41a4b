"""Dialogue discourse parsing: for every EDU its parent(s) among earlier EDUs and the SDRT sense.

``data`` turns ontology records or read views into plain :class:`~gnn.discourse.data.Dialogue`
objects and makes leak-free splits; ``graphs`` turns dialogues into PyG graphs; ``model`` is
the network; ``train`` trains, evaluates, saves and loads it; ``parse`` predicts.
"""
