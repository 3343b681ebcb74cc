"""The Kubernetes recipes of docs/shards/ against the API's own schemas (kubernetes-validate ships them per
version, offline): valid on 1.28 and on the newest version it knows, strictly (an unknown or misspelt
field fails); and what a cluster needs of them: the shared ReadWriteMany claim every pod mounts, resource
requests on every container, the merge Job's report and verify, the minimum version stated and true
(`backoffLimitPerIndex` is unknown to 1.27's schema), the image recipe installing the wheel and the suite."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

RECIPES = Path(__file__).resolve().parents[3] / "docs" / "shards"
MANIFESTS = ("kubernetes-volume.yaml", "kubernetes-shards.yaml", "kubernetes-merge.yaml")
VERSIONS = ("1.28.0", kubernetes_validate.latest_version())


def resource(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((RECIPES / name).read_text())
    return loaded


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", MANIFESTS)
def test_each_manifest_is_valid_on_1_28_and_the_newest_kubernetes(name: str, version: str) -> None:
    kubernetes_validate.validate(resource(name), version, strict=True)


def test_a_misspelt_field_fails_the_validation() -> None:
    """The check can fail: the same manifest with `resource:` for `resources:` is refused."""
    shards = resource("kubernetes-shards.yaml")
    container = shards["spec"]["template"]["spec"]["containers"][0]
    container["resource"] = container.pop("resources")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(shards, VERSIONS[-1], strict=True)


def test_the_stated_minimum_version_is_where_backoff_limit_per_index_exists() -> None:
    text = (RECIPES / "kubernetes-shards.yaml").read_text()
    assert "Needs Kubernetes 1.29 or newer" in text and "1.28" in text
    with pytest.raises(kubernetes_validate.ValidationError, match="backoffLimitPerIndex"):
        kubernetes_validate.validate(resource("kubernetes-shards.yaml"), "1.27.0", strict=True)


def test_every_pod_mounts_the_one_shared_claim_and_asks_for_what_it_needs() -> None:
    claim = resource("kubernetes-volume.yaml")
    assert claim["kind"] == "PersistentVolumeClaim" and claim["spec"]["accessModes"] == ["ReadWriteMany"]
    for name in ("kubernetes-shards.yaml", "kubernetes-merge.yaml"):
        pod = resource(name)["spec"]["template"]["spec"]
        claims = [v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"] if "persistentVolumeClaim" in v]
        assert claims == [claim["metadata"]["name"]], name
        for container in pod["containers"]:
            requests = container["resources"]["requests"]
            assert {"cpu", "memory"} <= requests.keys(), name
            assert container["resources"]["limits"]["memory"] == requests["memory"], name
            assert any(m["mountPath"] == "/journals" for m in container["volumeMounts"]), name
    shard_command = resource("kubernetes-shards.yaml")["spec"]["template"]["spec"]["containers"][0]["command"]
    assert shard_command[shard_command.index("--journal") + 1].startswith("/journals/")


def test_the_merge_job_merges_reports_and_verifies() -> None:
    script = resource("kubernetes-merge.yaml")["spec"]["template"]["spec"]["containers"][0]["command"][2]
    assert script.startswith("set -e;")
    assert re.findall(r"\bshiftbench (journal merge|runs|report|verify)\b", script) == [
        "journal merge", "runs", "report", "verify"]
    assert "/journals/merged.sqlite /journals/shard-*.sqlite" in script


def test_the_image_recipe_installs_the_built_wheel_and_builds_the_suite_into_its_working_folder() -> None:
    text = (RECIPES / "Dockerfile").read_text()
    assert re.search(r"pip install .*dist/shiftbench-\*\.whl", text)
    workdir = re.search(r"^WORKDIR (\S+)$", text, re.M)
    assert workdir is not None
    assert "shiftbench data build --out .shiftbench/suites/seed-0 --seed 0" in text  # where `run` looks for it
    assert resource("kubernetes-shards.yaml")["spec"]["template"]["spec"]["containers"][0]["image"] in text
