"""Services shared by the command line and the HTTP API.

Each module is one concern (``graph`` opens the graph, ``ingest``, ``corpora``, ``rdf``,
``sparql``, ``agreement``, ``features``, ``aif``, ``fetch``). A CLI command or an HTTP route
parses its arguments, calls a service and renders the result; orchestration lives here only.
"""
