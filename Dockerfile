# argweb API image. Talks to Neo4j over Bolt (ARGWEB_NEO4J_URI); no embedded server inside.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
RUN apt-get update && apt-get install -y --no-install-recommends libsndfile1 \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY pyproject.toml README.md ./
COPY ontology ./ontology
COPY graphstore ./graphstore
COPY gnn ./gnn
COPY api ./api
RUN pip install .
RUN useradd --create-home argweb && mkdir -p /var/lib/argweb && chown argweb /var/lib/argweb
USER argweb
EXPOSE 8000
CMD ["argweb", "serve", "--host", "0.0.0.0", "--port", "8000"]
