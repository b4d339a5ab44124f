"""A real OpenID Provider for the company sign-in's tests: panva's certified
`oidc-provider` from the npm registry, run under Node on loopback. The
package is installed on first use, into a directory beside the virtual
environment (`npm install --no-save`), so `make test` on a fresh machine
fetches it itself; `.ci/run` installs Node and npm."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ehs_core.testing import free_port

PACKAGE = "oidc-provider@9"
HERE = Path(__file__).parent
# Beside the virtual environment's packages, so `make clean` removes it too.
NODE_DIR = Path(os.environ.get("EHS_TEST_NODE_DIR", Path(sys.prefix) / "node" / "oidc-provider-9"))
CLIENT_ID = "ehs-tests"
CLIENT_SECRET = "a-client-secret-for-the-tests-only"


def install_provider() -> Path:
    """The directory holding the npm package and our script."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is needed for the OpenID Connect tests (apt-get install nodejs npm; "
                        ".ci/run installs them)")
    if not (NODE_DIR / "node_modules" / "oidc-provider" / "package.json").exists():
        NODE_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(NODE_DIR),
                        PACKAGE], check=True, capture_output=True, timeout=300)
    # The script must sit beside node_modules for `import "oidc-provider"`.
    shutil.copyfile(HERE / "oidc_provider.mjs", NODE_DIR / "provider.mjs")
    return NODE_DIR


@dataclass
class OpenIDProvider:
    issuer: str
    accounts: dict[str, dict[str, Any]]
    log: list[str]

    def settings(self, **extra: str) -> dict[str, str]:
        return {"oidc.issuer": self.issuer, "oidc.client_id": CLIENT_ID, "oidc.client_secret": CLIENT_SECRET,
                "oidc.button_label": "Sign in with Acme ID", **extra}


@contextmanager
def running_provider(redirect_uri: str, accounts: dict[str, dict[str, Any]]) -> Iterator[OpenIDProvider]:
    """`accounts`: {subject: {email, email_verified, name}}; a person signs
    in at the provider with the subject as login and any password."""
    directory = install_provider()
    port = free_port()
    config = {"port": port, "accounts": accounts,
              "client": {"client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
                         "redirect_uris": [redirect_uri]}}
    env = dict(os.environ, OIDC_TEST_CONFIG=json.dumps(config), NODE_ENV="test")
    process = subprocess.Popen(["node", "provider.mjs"], cwd=directory, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    log: list[str] = []
    ready = threading.Event()

    def read() -> None:
        for line in process.stdout:
            log.append(line.rstrip())
            if line.startswith("ready "):
                ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        if not ready.wait(30):
            raise AssertionError("the OpenID Provider did not start:\n" + "\n".join(log))
        yield OpenIDProvider(f"http://127.0.0.1:{port}", accounts, log)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(5)
