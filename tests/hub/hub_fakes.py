"""Test doubles for the Hub.

``FakeHub`` answers the Hub HTTP API the upload path uses (create repo, repo info, card YAML validation, preupload,
commit) from memory, plugged in below the real ``huggingface_hub`` client through its public
``set_client_factory`` hook (below rlif's own timeout and retry layer, ``rlif.hub.network``), so
``HfApi.create_repo`` and ``upload_folder`` run unmodified and the test sees the requests they send. (The local olah
hub used by the download tests cannot take uploads.)
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpx
import yaml

from rlif.hub import network

ENDPOINT = "https://fake-hub.test"
_REPO_API = re.compile(r"^/api/(?P<type>models|datasets)/(?P<repo>[^/]+/[^/]+)(?P<rest>/.*)?$")


def git_blob_id(content: bytes) -> str:
    """Git's blob id, which the Hub reports as a file's oid and the client compares to skip unchanged files."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content, usedforsecurity=False).hexdigest()


@dataclass
class FakeRepo:
    """One repo's state."""

    private: bool
    files: dict[str, bytes] = field(default_factory=dict)
    commits: list[str] = field(default_factory=list)


@dataclass
class FakeHub:
    """In-memory Hub. ``requests`` logs ``(method, path, authorization header)`` for every request."""

    repos: dict[tuple[str, str], FakeRepo] = field(default_factory=dict)
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    echo_auth_on_commit: bool = False

    def handle(self, request: httpx.Request) -> httpx.Response:
        """Answer one request like the Hub does."""
        path = request.url.path
        self.requests.append((request.method, path, request.headers.get("authorization", "")))
        if path == "/api/repos/create" and request.method == "POST":
            return self._create(json.loads(request.content))
        if path == "/api/validate-yaml":
            return self._validate_yaml(json.loads(request.content))
        match = _REPO_API.match(path)
        if match:
            key = (match["type"][:-1], match["repo"])
            rest = match["rest"] or ""
            if key not in self.repos:
                return httpx.Response(
                    404, headers={"X-Error-Code": "RepoNotFound"}, json={"error": "Repository not found"}
                )
            repo = self.repos[key]
            if request.method == "GET" and (rest == "" or rest.startswith("/revision/")):
                return httpx.Response(200, json=self._info(key, repo))
            if request.method == "POST" and rest.startswith("/preupload/"):
                return self._preupload(repo, json.loads(request.content))
            if request.method == "POST" and rest.startswith("/commit/"):
                if self.echo_auth_on_commit:
                    return httpx.Response(403, json={"error": f"forbidden for {request.headers.get('authorization')}"})
                return self._commit(key, repo, request.content)
        if not path.startswith("/api/agent-harnesses"):  # the client's optional feature probe
            self.unexpected.append(f"{request.method} {path}")
        return httpx.Response(404, json={"error": "not found"})

    def _create(self, body: dict) -> httpx.Response:
        repo_id = f"{body['organization']}/{body['name']}" if body.get("organization") else body["name"]
        key = (body.get("type") or "model", repo_id)
        if key in self.repos:
            return httpx.Response(409, json={"error": "You already created this repo", "url": f"{ENDPOINT}/{repo_id}"})
        self.repos[key] = FakeRepo(private=body.get("visibility") == "private")
        return httpx.Response(200, json={"url": f"{ENDPOINT}/{repo_id}", "name": repo_id, "id": repo_id})

    @staticmethod
    def _validate_yaml(body: dict) -> httpx.Response:
        text = body["content"]
        errors = []
        if text.startswith("---"):
            try:
                yaml.safe_load(text.split("---")[1])
            except yaml.YAMLError as err:
                errors.append({"message": str(err)})
        return httpx.Response(200, json={"errors": errors, "warnings": []})

    @staticmethod
    def _info(key: tuple[str, str], repo: FakeRepo) -> dict:
        sha = hashlib.sha1(str(len(repo.commits)).encode(), usedforsecurity=False).hexdigest()
        return {"id": key[1], "private": repo.private, "sha": sha, "siblings": [{"rfilename": f} for f in repo.files]}

    @staticmethod
    def _preupload(repo: FakeRepo, body: dict) -> httpx.Response:
        files = []
        for item in body["files"]:
            oid = git_blob_id(repo.files[item["path"]]) if item["path"] in repo.files else None
            files.append({"path": item["path"], "uploadMode": "regular", "shouldIgnore": False, "oid": oid})
        return httpx.Response(200, json={"files": files})

    @staticmethod
    def _commit(key: tuple[str, str], repo: FakeRepo, content: bytes) -> httpx.Response:
        summary = ""
        for line in content.decode().splitlines():
            item = json.loads(line)
            if item["key"] == "header":
                summary = item["value"]["summary"]
            elif item["key"] == "file":
                repo.files[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
        repo.commits.append(summary)
        oid = hashlib.sha1(summary.encode() + bytes(len(repo.commits)), usedforsecurity=False).hexdigest()
        url = f"{ENDPOINT}/{key[1]}/commit/{oid}"
        return httpx.Response(200, json={"commitUrl": url, "commitOid": oid, "pullRequestUrl": None})


@contextmanager
def fake_hub_transport() -> Iterator[FakeHub]:
    """Route every ``huggingface_hub`` request of this process to a new ``FakeHub`` for the duration."""
    hub = FakeHub()
    network.install_client(httpx.MockTransport(hub.handle))
    try:
        yield hub
    finally:
        network.install_client()
