"""`add_restricted_audit_action`: a plugin keeps entries in the incident's
one audit trail that only some callers read on the timeline."""

from __future__ import annotations

import pytest
from pyramid.config import Configurator
from pyramid.exceptions import ConfigurationError
from pyramid.testing import DummyRequest

from ehs_core.audit import add_restricted_audit_action, readable
from ehs_core.audit.models import AuditEntry


def configured(*claims: tuple[str, object]) -> Configurator:
    config = Configurator(settings={})
    config.add_directive("add_restricted_audit_action", add_restricted_audit_action)
    for action, may_see in claims:
        config.add_restricted_audit_action(action, may_see)
    config.commit()
    return config


def test_entries_of_a_restricted_action_are_shown_only_to_whom_may_see_them() -> None:
    config = configured(("secret.note", lambda request: request.allowed))
    entries = [AuditEntry(action="created"), AuditEntry(action="secret.note"), AuditEntry(action="updated")]
    allowed, refused = DummyRequest(allowed=True), DummyRequest(allowed=False)
    allowed.registry = refused.registry = config.registry
    assert [e.action for e in readable(allowed, entries)] == ["created", "secret.note", "updated"]
    assert [e.action for e in readable(refused, entries)] == ["created", "updated"]


def test_an_action_is_restricted_once() -> None:
    with pytest.raises(ConfigurationError):
        configured(("secret.note", lambda request: True), ("secret.note", lambda request: False))
