from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.plugins.osha import new_site


@pytest.fixture
def manager(make_user: Callable[..., Any]) -> Any:
    """A signed-in safety manager (the least role the plugin's endpoints allow)."""
    return make_user("safety_manager", name="Sam Safety")


@pytest.fixture
def site(manager: Any) -> int:
    """A site with every establishment field filled in, in America/Chicago:
    `OCCURRED` (-05:00 in March) is then the establishment's own clock."""
    return new_site(manager, timezone="America/Chicago")
