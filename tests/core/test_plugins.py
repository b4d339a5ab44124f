"""Plugins: found through the `ehs.plugins` entry-point group, enabled by the
`ehs.plugins` setting, and only ever reached by the core through that group
(runtime contract, "Plugins")."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import sqlalchemy as sa
from pyramid.exceptions import ConfigurationConflictError, ConfigurationError
from pyramid.interfaces import IRoutesMapper
from pyramid.request import Request

import ehs_core
import ehs_core.plugins
from ehs_core.config import configure
from ehs_core.migrations import upgrade
from ehs_core.plugins import GROUP, discover
from ehs_core.settings import SettingsError
from ehs_core.testing import PASSWORD, Client, base_settings, file_report, new_site
from tests.core import example_plugin

BUILT_IN = ("osha", "kiosk", "analytics", "calosha")
CORE_SOURCE = Path(ehs_core.__file__).parent
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def build(tmp_path: Path, clean_environ: None) -> Iterator[Callable[..., Any]]:
    """Assemble an application on its own fresh SQLite database."""
    configs: list[Any] = []

    def make(plugins: str, *, migrate: bool = True, database: Path | None = None) -> Any:
        database = database or tmp_path / "ehs.sqlite"
        settings = base_settings(f"sqlite:///{database}", 1025, str(tmp_path / "uploads"))
        config = configure(dict(settings, **{"ehs.plugins": plugins}))
        configs.append(config)
        if migrate:
            upgrade(config.registry)
        return config

    yield make
    for config in configs:
        config.registry["db.engine"].dispose()


@pytest.fixture
def external_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tests/core/example_plugin.py installed as its own distribution."""
    site = example_plugin.install_distribution(tmp_path / "site-packages")
    monkeypatch.syspath_prepend(str(site))
    return site


def with_extra_plugins(monkeypatch: pytest.MonkeyPatch, **plugins: Callable[..., None]) -> None:
    """Make `discover()` also return these includeme callables, as if
    installed under those entry-point names."""
    real_discover = ehs_core.plugins.discover

    def fake_entry_point(name: str, func: Callable[..., None]) -> EntryPoint:
        return EntryPoint(name=name, value=f"{func.__module__}:{func.__name__}", group=GROUP)

    def discover_with_extras() -> dict[str, EntryPoint]:
        return {**real_discover(), **{n: fake_entry_point(n, f) for n, f in plugins.items()}}

    monkeypatch.setattr(ehs_core.plugins, "discover", discover_with_extras)


def table_names(config: Any) -> set[str]:
    return set(sa.inspect(config.registry["db.engine"]).get_table_names())


# --- the core never imports the plugins -------------------------------------------


def plugin_references(source: str) -> list[str]:
    """Imports of ehs_plugins, and dotted names of it handed to
    config.include / importlib as strings."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.split(".")[0] == "ehs_plugins"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] == "ehs_plugins":
                found.append(node.module)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.split(":")[0].split(".")[0] == "ehs_plugins":
                found.append(node.value)
    return found


def test_the_import_check_recognises_every_way_of_reaching_a_plugin():
    source = textwrap.dedent("""
        import ehs_plugins
        import os, ehs_plugins.osha as osha
        from ehs_plugins.kiosk import views
        from ehs_plugins import analytics
        def includeme(config):
            config.include("ehs_plugins.osha:includeme")
        from . import ehs_plugins_like
        text = "see the ehs_plugins package"
    """)
    expected = ["ehs_plugins", "ehs_plugins.osha", "ehs_plugins.kiosk", "ehs_plugins",
                "ehs_plugins.osha:includeme"]
    assert sorted(plugin_references(source)) == sorted(expected)


def test_no_module_of_the_core_imports_the_plugins():
    modules = sorted(CORE_SOURCE.rglob("*.py"))
    assert len(modules) > 20  # the walk really saw the core
    offenders = {str(path.relative_to(CORE_SOURCE.parent)): refs
                 for path in modules if (refs := plugin_references(path.read_text(encoding="utf-8")))}
    assert offenders == {}


PLUGINS_SOURCE = ROOT / "ehs_plugins"


def imported_modules(source: str, module: str) -> list[str]:
    """Every module `source` (the module named `module`) imports, absolute,
    including `from x import y` as both x and x.y (y may be a module)."""
    package = module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parent = ".".join(parts[: len(parts) - node.level + 1])
                base = f"{parent}.{base}" if base else parent
            found.append(base)
            found += [f"{base}.{alias.name}" for alias in node.names]
    return found


def wrong_way_imports(source: str, module: str) -> list[str]:
    """What a plugin module must not import: a core `views` module (the
    operations are published in service modules) or another plugin."""
    own = ".".join(module.split(".")[:2])
    offences = []
    for name in imported_modules(source, module):
        parts = name.split(".")
        if parts[0] == "ehs_core" and "views" in parts[1:]:
            offences.append(name)
        elif parts[0] == "ehs_plugins" and len(parts) > 1 and ".".join(parts[:2]) != own:
            offences.append(name)
    return offences


def test_the_plugin_import_check_recognises_core_views_and_other_plugins():
    source = textwrap.dedent("""
        from ehs_core.incidents.views import file_incident
        from ehs_core.attachments import views
        import ehs_core.users.views as user_views
        from ehs_plugins.osha.models import InjuryCase
        from ehs_plugins import kiosk
        from ..osha import cases
        from ehs_core.incidents.filing import file_incident
        from ehs_plugins.analytics import stats
        from . import figures
    """)
    found = wrong_way_imports(source, "ehs_plugins.analytics.stats")
    assert sorted(set(found)) == sorted({
        "ehs_core.incidents.views", "ehs_core.incidents.views.file_incident",
        "ehs_core.attachments.views", "ehs_core.users.views", "ehs_plugins.osha.models",
        "ehs_plugins.osha.models.InjuryCase", "ehs_plugins.kiosk", "ehs_plugins.osha",
        "ehs_plugins.osha.cases"})


def test_no_plugin_imports_a_core_views_module_or_another_plugin():
    modules = sorted(PLUGINS_SOURCE.rglob("*.py"))
    assert len(modules) > 20  # the walk really saw the plugins
    offenders = {}
    for path in modules:
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if refs := wrong_way_imports(path.read_text(encoding="utf-8"), module):
            offenders[str(path.relative_to(ROOT))] = refs
    assert offenders == {}


def test_the_core_assembles_and_serves_with_the_plugins_package_missing(tmp_path):
    """Run in a fresh interpreter where `import ehs_plugins` fails."""
    script = textwrap.dedent(f"""
        import sys
        sys.modules["ehs_plugins"] = None  # any import of it now raises ImportError
        from ehs_core.config import configure
        from ehs_core.migrations import upgrade
        from ehs_core.testing import base_settings
        import webtest
        settings = base_settings("sqlite:///{tmp_path / 'ehs.sqlite'}", 1025, "{tmp_path}")
        config = configure(dict(settings, **{{"ehs.plugins": ""}}))
        upgrade(config.registry)
        app = webtest.TestApp(config.make_wsgi_app())
        assert app.get("/api/health").json == {{"ok": True}}
        print("core ok")
    """)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("EHS_") and k not in {"MAX_UPLOAD_MB", "TZ"}}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "core ok" in done.stdout


# --- discovery and enabling -------------------------------------------------------------


def test_built_in_plugins_are_discovered_through_the_ehs_plugins_entry_point_group():
    found = discover()
    assert set(BUILT_IN) <= set(found)
    for name in BUILT_IN:
        assert found[name].group == "ehs.plugins"
        assert found[name].value == f"ehs_plugins.{name}:includeme"
        assert callable(found[name].load())


def test_an_unknown_plugin_name_stops_configuration_naming_it(build):
    with pytest.raises(SettingsError) as caught:
        build("osha no_such_plugin", migrate=False)
    assert "no_such_plugin" in str(caught.value)
    assert "ehs.plugins" in str(caught.value)


def test_an_unknown_plugin_name_from_the_environment_stops_configuration(build, monkeypatch):
    monkeypatch.setenv("EHS_PLUGINS", "osha typo_plugin")
    with pytest.raises(SettingsError) as caught:
        build("osha", migrate=False)
    assert "typo_plugin" in str(caught.value)


def test_the_enabled_plugins_are_recorded_in_order(build):
    config = build("analytics osha", migrate=False)
    assert tuple(config.registry["enabled_plugins"]) == ("analytics", "osha")


# --- a plugin packaged outside this repository ---------------------------------------------


def test_an_installed_external_plugin_is_discovered_in_the_same_group(external_plugin):
    found = discover()
    assert found["example"].value == "tests.core.example_plugin:includeme"
    assert found["example"].load() is example_plugin.includeme
    assert set(BUILT_IN) <= set(found)


@pytest.mark.parametrize("enabled_by", ["ini", "env"])
def test_an_enabled_external_plugin_adds_its_route_identity_and_mail_template(
        external_plugin, build, monkeypatch, enabled_by):
    if enabled_by == "env":
        monkeypatch.setenv("EHS_PLUGINS", "osha example")
        config = build("osha")
    else:
        config = build("osha example")
    app = Client(config.make_wsgi_app())

    answer = app.get("/api/example", headers={example_plugin.BADGE_HEADER: "7"}).json
    assert answer == {"plugin": "example", "caller": {"kind": "badge", "id": 7}}
    # its identity provider is consulted after the core's, and its ACL still applies
    assert app.get("/api/example", status=401).json == {"error": "Authentication required"}
    assert example_plugin.MAIL_TEMPLATE in config.registry["mail_templates"]


def test_an_external_plugin_renders_its_mail_template_with_the_usual_name_placeholder(
        external_plugin, build):
    """`render` is what plugins use for mail; every core template greets
    "Hello $name", so a `name` value must reach the template."""
    config = build("example", migrate=False)
    request = Request.blank("/", base_url="http://ehs.test")
    request.registry = config.registry
    message = example_plugin.greeting(request, "Ada")
    assert message["subject"] == "Your sign-in link"
    assert "Hello Ada," in message["body"]
    assert "http://ehs.test/example" in message["body"]


def test_a_disabled_external_plugin_contributes_nothing(external_plugin, build):
    config = build("osha")
    app = Client(config.make_wsgi_app())

    response = app.get("/api/example", headers={example_plugin.BADGE_HEADER: "7"}, status=404)
    assert response.json == {"error": "Not found"}
    assert config.registry.queryUtility(IRoutesMapper).get_route("example") is None
    assert example_plugin.badge_identity not in config.registry["identity_providers"]
    assert example_plugin.MAIL_TEMPLATE not in config.registry["mail_templates"]
    assert "example" not in config.registry["enabled_plugins"]


# --- one owner per migration history ---------------------------------------------------------


def claims_osha_history(config: Any) -> None:
    config.add_migrations("osha", "ehs_plugins.osha:migrations/versions")


def claims_shared_history(config: Any) -> None:
    config.add_migrations("shared", "ehs_plugins.kiosk:migrations/versions")


def also_claims_shared_history(config: Any) -> None:
    config.add_migrations("shared", "ehs_plugins.analytics:migrations/versions")


def claims_core_history(config: Any) -> None:
    config.add_migrations("core", "ehs_plugins.osha:migrations/versions")


def test_two_plugins_registering_the_same_migration_name_conflict_at_start_up(build, monkeypatch):
    with_extra_plugins(monkeypatch, first=claims_shared_history, second=also_claims_shared_history)
    with pytest.raises(ConfigurationConflictError) as caught:
        build("first second", migrate=False)
    assert "shared" in str(caught.value)


def test_a_plugin_reusing_a_built_in_plugins_migration_name_conflicts_at_start_up(build, monkeypatch):
    with_extra_plugins(monkeypatch, impostor=claims_osha_history)
    with pytest.raises(ConfigurationConflictError):
        build("osha impostor", migrate=False)


def test_a_plugin_cannot_take_over_the_cores_migration_history(build, monkeypatch):
    """The core registers its history before it commits and the plugins are
    included; a plugin that names its history "core" must still be refused at
    start-up, not fail later inside `ehs migrate` against alembic_version."""
    with_extra_plugins(monkeypatch, impostor=claims_core_history)
    with pytest.raises(ConfigurationError):
        build("impostor", migrate=False)


# --- disabled plugins leave no trace in the schema ---------------------------------------------


@pytest.mark.parametrize("enabled", ["", "osha", "kiosk analytics", "osha kiosk analytics"])
def test_only_enabled_plugins_get_a_migration_version_table(build, enabled):
    config = build(enabled)
    version_tables = {t for t in table_names(config) if t.startswith("alembic_version")}
    assert version_tables == {"alembic_version"} | {f"alembic_version_{n}" for n in enabled.split()}


def test_enabling_a_plugin_later_migrates_just_that_plugin(build, tmp_path):
    database = tmp_path / "ehs.sqlite"
    first = build("osha", database=database)
    with first.registry["db.engine"].begin() as conn:
        conn.execute(sa.text("INSERT INTO organizations (name, created_at) VALUES ('Acme', '2026-01-01')"))
    assert "alembic_version_kiosk" not in table_names(first)

    second = build("osha kiosk", database=database)
    assert "alembic_version_kiosk" in table_names(second)
    with second.registry["db.engine"].connect() as conn:
        assert conn.execute(sa.text("SELECT name FROM organizations")).scalars().all() == ["Acme"]


# --- the example plugin uses every kind of extension point ------------------------------------


@pytest.fixture
def example_app(external_plugin: Path, build: Callable[..., Any]) -> Callable[..., Client]:
    """An application with the example plugin enabled, on its own database,
    with a signed-in admin and one site."""

    def make() -> Client:
        config = build("example")
        app = Client(config.make_wsgi_app())
        app.post_json("/api/setup", {"organizationName": "Acme Works", "name": "Ada Admin",
                                     "email": "admin@acme.test", "password": PASSWORD}, status=201)
        app.site = new_site(app)["id"]
        app.registry = config.registry
        return app

    return make


def test_the_example_plugin_tags_new_reports_shows_the_tag_and_filters_by_it(example_app):
    app = example_app()
    assert "example_tags" in table_names(SimpleNamespace(registry=app.registry))  # its own migrations
    created = file_report(app, app.site).json
    assert created["exampleTag"] == "new"  # listener on IncidentCreated, shown by its section
    other = file_report(app, app.site, title="Loose cable").json["number"]
    app.put_json(f"/api/example/incidents/{other}/tag", {"tag": "electrical"}, status=200)
    listed = app.get("/api/incidents?exampleTag=new").json
    assert [item["number"] for item in listed["items"]] == [created["number"]]
    # Its SQL is the plugin's to make (it joins): built for each value.
    listed = app.get("/api/incidents?exampleTag=electrical&type=hazard").json
    assert [item["number"] for item in listed["items"]] == [other]
    assert app.get(f"/api/incidents/{other}").json["exampleTag"] == "electrical"
    doc = app.get("/api/openapi.json").json
    assert "exampleTag" in {p["name"] for p in doc["paths"]["/api/incidents"]["get"]["parameters"]}


def test_the_example_plugins_guard_holds_closing_until_the_tag_its_setting_names(example_app, monkeypatch):
    monkeypatch.setenv("EHS_EXAMPLE_CLOSING_TAG", "approved")
    app = example_app()
    assert app.registry.settings["example.closing_tag"] == "approved"
    number = file_report(app, app.site).json["number"]
    app.post_json(f"/api/incidents/{number}/transitions", {"to": "triage"}, status=200)
    blocked = {t["to"]: t["blockedReason"] for t in app.get(f"/api/incidents/{number}").json["transitions"]}
    assert blocked["closed"] == "Tag the incident 'approved' first"
    refused = app.post_json(f"/api/incidents/{number}/transitions", {"to": "closed"}, status=409).json
    assert refused == {"error": "Tag the incident 'approved' first"}
    app.put_json(f"/api/example/incidents/{number}/tag", {"tag": "approved"}, status=200)
    closed = app.post_json(f"/api/incidents/{number}/transitions", {"to": "closed"}, status=200).json
    assert closed["status"] == "closed"


def test_a_bad_example_setting_stops_start_up_naming_it(external_plugin, build, monkeypatch):
    monkeypatch.setenv("EHS_EXAMPLE_CLOSING_TAG", "   ")
    with pytest.raises(SettingsError, match="EHS_EXAMPLE_CLOSING_TAG"):
        build("example", migrate=False)


def takes_core_name(config: Any) -> None:
    config.add_setting("ehs.public_url", "EHS_OTHER", str, "x")


def takes_foreign_variable(config: Any) -> None:
    config.add_setting("other.thing", "HOME", str, "x")


def test_a_plugin_setting_must_not_take_a_core_name_or_a_foreign_variable(build, monkeypatch):
    with_extra_plugins(monkeypatch, core_name=takes_core_name, foreign=takes_foreign_variable)
    with pytest.raises(ConfigurationError, match="belongs to the core"):
        build("core_name", migrate=False)
    with pytest.raises(ConfigurationError, match="must start with EHS_"):
        build("foreign", migrate=False)


# --- only public, declared third-party APIs ----------------------------------------

OWN_PACKAGES = {"ehs_core", "ehs_plugins"}


def third_party_privates(source: str) -> list[str]:
    """Imports of a `_`-prefixed module or name of a third-party package
    (`from markupsafe._speedups import …`, `from psycopg import _queries`),
    and `_`-prefixed attributes read off a third-party module bound by an
    import (`psycopg._queries`). Dunders (`__version__`) are public."""

    def private(part: str) -> bool:
        return part.startswith("_") and not (part.startswith("__") and part.endswith("__"))

    found, modules = [], set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in OWN_PACKAGES:
                    continue
                if any(private(part) for part in alias.name.split(".")):
                    found.append(alias.name)
                modules.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.split(".")[0] in OWN_PACKAGES:
                continue
            if any(private(part) for part in node.module.split(".")):
                found.append(node.module)
            found += [f"{node.module}.{alias.name}" for alias in node.names if private(alias.name)]
    for node in ast.walk(ast.parse(source)):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and private(node.attr)):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_the_private_import_check_recognises_every_way_of_reaching_an_internal():
    source = textwrap.dedent("""
        from markupsafe._speedups import _escape_inner
        from psycopg import _queries, sql
        import jinja2._identifier
        import sqlalchemy as sa
        from ehs_core.db import _aware_utc
        from . import _own
        from sqlalchemy.engine import Connection
        sa._private_thing
        sa.__version__
        def f(connection):
            return connection._echo  # not a module's: not seen by an import check
    """)
    assert sorted(third_party_privates(source)) == sorted([
        "markupsafe._speedups", "markupsafe._speedups._escape_inner", "psycopg._queries",
        "jinja2._identifier", "sa._private_thing"])


def source_modules() -> list[Path]:
    modules = sorted(CORE_SOURCE.rglob("*.py")) + sorted(PLUGINS_SOURCE.rglob("*.py"))
    return [path for path in modules if "migrations" not in path.relative_to(ROOT).parts]


def test_no_module_imports_a_private_name_of_another_package():
    """Only public, documented APIs of the libraries (style.md, "Plain
    code"): an upgrade of one must not be a research project."""
    offenders = {str(path.relative_to(ROOT)): found for path in source_modules()
                 if (found := third_party_privates(path.read_text(encoding="utf-8")))}
    assert offenders == {}


# WSGI-level code that runs before a Pyramid request exists, for which the
# environ is the only channel (`servers.ForwardedClient`; intake.py's body
# handling for pyramid_retry).
ENVIRON_WRITERS = {"ehs_core/servers.py", "ehs_core/intake.py"}


def environ_writes(source: str) -> list[str]:
    """Writes into a request's WSGI environ (`request.environ[key] = …`,
    `environ.setdefault(key, …)`, `.update({key: …})`) under a key that is an
    "ehs." string, or a name this module's constants do not resolve to a
    string (whose value the check cannot see). `os.environ` is the
    process's, not a request's."""
    tree = ast.parse(source)
    constants = {target.id: node.value.value for node in tree.body if isinstance(node, ast.Assign)
                 and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
                 for target in node.targets if isinstance(target, ast.Name)}

    def is_environ(node: ast.AST) -> bool:
        if isinstance(node, ast.Name):
            return node.id == "environ"
        return (isinstance(node, ast.Attribute) and node.attr == "environ"
                and not (isinstance(node.value, ast.Name) and node.value.id == "os"))

    def parked(key: ast.AST | None) -> bool:
        if isinstance(key, ast.Constant):
            return isinstance(key.value, str) and key.value.startswith("ehs.")
        if isinstance(key, ast.Name) and key.id in constants:
            return constants[key.id].startswith("ehs.")
        return True

    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store) and is_environ(node.value)
                and parked(node.slice)):
            found.append(f"line {node.lineno}: environ[{ast.unparse(node.slice)}] =")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and is_environ(node.func.value) and node.func.attr in ("setdefault", "update", "__setitem__")):
            keys = node.args[:1] if node.func.attr != "update" else (
                node.args[0].keys if node.args and isinstance(node.args[0], ast.Dict) else [None])
            keys = [*keys, *(ast.Constant(k.arg) if k.arg else None for k in node.keywords)]
            if any(parked(key) for key in keys):
                found.append(f"line {node.lineno}: environ.{node.func.attr}(…)")
    return found


def test_the_environ_check_recognises_every_way_of_parking_state():
    source = textwrap.dedent("""
        import os
        READ = "ehs.osha.cases_read"
        PATH = "PATH_INFO"
        request.environ["ehs.identity"] = None
        request.environ[READ] = {}
        found = request.environ[services.COUNTED] = {}
        request.environ.setdefault(READ, {})
        event.environ.update({"ehs.refdata.changed": True})
        environ = request.environ
        environ["ehs.origin_missing"] = True
        request.environ["wsgi.input"] = None
        request.environ[PATH] = "/"
        request.environ.get(READ)
        os.environ["EHS_PLUGINS"] = "osha"
    """)
    assert environ_writes(source) == [
        "line 5: environ['ehs.identity'] =", "line 6: environ[READ] =",
        "line 7: environ[services.COUNTED] =", "line 8: environ.setdefault(…)", "line 9: environ.update(…)",
        "line 11: environ['ehs.origin_missing'] ="]


def test_no_module_parks_per_request_state_in_the_environ():
    """Per-request state goes through Pyramid's request methods
    (`config.add_request_method(..., reify=True)`), never parked in
    request.environ (style.md, "Speed without a second framework"; issue
    #34): a request attribute is new with each attempt pyramid_retry makes,
    and says where it is made. Only WSGI-level code before a Pyramid request
    exists writes the environ, read back through a request method
    (`request.proxy_address`)."""
    offenders = {name: found for path in source_modules()
                 if (name := str(path.relative_to(ROOT))) not in ENVIRON_WRITERS
                 and (found := environ_writes(path.read_text(encoding="utf-8")))}
    assert offenders == {}


def declared_requirements() -> dict[str, str]:
    """{normalised distribution name: its version specifier} of every
    requirement in pyproject.toml (the service's and its extras')."""
    import re
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lines = list(project["dependencies"])
    for extra in project.get("optional-dependencies", {}).values():
        lines += extra
    declared = {}
    for line in lines:
        match = re.match(r"\s*([A-Za-z0-9._-]+)(\[[^]]*\])?\s*(.*)", line)
        declared[re.sub(r"[-_.]+", "-", match.group(1)).lower()] = match.group(3).split(";")[0].strip()
    return declared


def test_every_imported_library_is_declared_with_a_tested_version_range():
    """A library the code imports is named in pyproject.toml with the range
    of versions it is tested on (a lower and an upper bound): Jinja2 was
    imported for a year without being declared."""
    import re
    from importlib.metadata import packages_distributions

    distributions = packages_distributions()
    declared = declared_requirements()
    missing, unbounded = {}, {}
    for path in source_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top in OWN_PACKAGES or top in sys.stdlib_module_names:
                    continue
                candidates = distributions.get(top, [top])
                if len(candidates) > 1:  # a namespace package (zope.*): named by its first two parts
                    named = ".".join(name.split(".")[:2])
                    candidates = [d for d in candidates if d.lower() == named] or candidates
                for distribution in candidates:
                    key = re.sub(r"[-_.]+", "-", distribution).lower()
                    if key not in declared:
                        missing.setdefault(key, str(path.relative_to(ROOT)))
                    elif "<" not in declared[key] or ">" not in declared[key]:
                        unbounded.setdefault(key, declared[key])
    assert missing == {}
    assert unbounded == {}


# --- no import cycles; the pages' foundation knows no domain ------------------------


def module_graph() -> dict[str, set[str]]:
    """Each module of ehs_core and ehs_plugins (migrations aside) and the
    modules of theirs it imports, anywhere in it (a function-level import
    too). A package's own submodules are not counted as its imports: a
    package contains them (`includeme` including `.views`)."""
    modules = {}
    for path in source_modules():
        parts = path.relative_to(ROOT).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in modules.items():
        module = name + ".__init__" if path.name == "__init__.py" else name
        found = set()
        for imported in imported_modules(path.read_text(encoding="utf-8"), module):
            if imported in modules and imported != name and not imported.startswith(name + "."):
                found.add(imported)
        graph[name] = found
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                other = stack.pop()
                component.append(other)
                if other == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_cycle_check_finds_a_cycle_through_a_function_level_import():
    graph = {"a.pages": {"b.pages"}, "b.pages": {"a.pages"}, "a": set(), "c": {"a"}}
    assert cycles(graph) == [["a.pages", "b.pages"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_module_imports_one_that_imports_it_back():
    """No import cycle anywhere in ehs_core or ehs_plugins (hidden by a
    function-level import or not): each package can be read on its own."""
    graph = module_graph()
    assert len(graph) > 100  # the walk really saw the code
    assert cycles(graph) == []


def test_the_pages_foundation_imports_no_domain_package():
    """ehs_core.ui (layout, menu, panels, forms, rendering) knows no
    domain: incidents, actions and the rest register what they show."""
    domains = {path.parent.name for path in CORE_SOURCE.glob("*/__init__.py")} - {"ui", "migrations"}
    assert {"incidents", "actions", "investigation", "users", "sites"} <= domains
    offenders = {name: sorted(module for module in imports if set(module.split(".")[1:2]) & domains)
                 for name, imports in module_graph().items() if name.split(".")[:2] == ["ehs_core", "ui"]}
    assert {name: found for name, found in offenders.items() if found} == {}
