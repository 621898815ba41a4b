import os
import shutil
import subprocess
from pathlib import Path

import yaml

COMPOSE = Path(__file__).resolve().parents[2] / "docker-compose.yml"


def test_compose_runs_official_neo4j_with_healthcheck_and_api() -> None:
    spec = yaml.safe_load(COMPOSE.read_text())
    neo4j = spec["services"]["neo4j"]
    assert neo4j["image"] == "neo4j:5.26-community"
    assert "healthcheck" in neo4j
    assert any(v.endswith(":/data") for v in neo4j["volumes"])
    api = spec["services"]["api"]
    assert api["build"]["dockerfile"] == "Dockerfile"
    assert api["depends_on"]["neo4j"]["condition"] == "service_healthy"
    assert api["environment"]["ARGWEB_NEO4J_URI"] == "bolt://neo4j:7687"


def test_compose_config_parses_with_the_docker_client_when_present() -> None:
    exe = shutil.which("docker-compose")
    if exe is None:
        return  # the YAML-level test above still checks the file
    env = {**os.environ, "NEO4J_PASSWORD": "test"}
    proc = subprocess.run([exe, "-f", str(COMPOSE), "config"], capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "neo4j:5.26-community" in proc.stdout
