"""`GET /api/openapi.json`: an OpenAPI 3.1 description generated from the
route registrations and the colander schemas the views are declared with
(`body=`, `query=` view options), for the core and every enabled plugin.
Nothing here is written by hand per endpoint, so it cannot drift."""

from __future__ import annotations

from typing import Any

import colander
from pyramid.config import Configurator
from pyramid.registry import Registry
from pyramid.request import Request
from pyramid.security import NO_PERMISSION_REQUIRED
from pyramid.view import view_config

from ehs_core import schemas as s
from ehs_core.directives import register_once
from ehs_core.plugins import enabled_plugins
from ehs_core.validation import schema_of
from ehs_core.webhooks.kinds import openapi_webhooks

ERROR = {"type": "object", "required": ["error"], "properties": {
    "error": {"type": "string"},
    "issues": {"type": "array", "items": {"type": "object", "required": ["path", "message"], "properties": {
        "path": {"type": "string"}, "message": {"type": "string"}}}}}}
ERROR_STATUSES = {
    "400": "Invalid request (with `issues`)", "401": "Not signed in / bad credentials",
    "403": "Not allowed (role, origin)", "404": "Not found or not visible", "405": "Method not allowed",
    "409": "Conflict with the current state", "413": "Too large", "415": "Unsupported media type",
    "422": "Idempotency key reused for a different request", "429": "Too many requests",
    "500": "Internal error", "503": "Busy, try again",
}
SUCCESS_TEXT = {200: "OK", 201: "Created", 204: "No content"}


def _length(node: colander.SchemaNode, schema: dict[str, Any]) -> None:
    validators = [node.validator] if node.validator else []
    while validators:
        v = validators.pop()
        inner = getattr(v, "__wrapped_validator__", None)
        if inner is not None:
            validators.append(inner)
        if isinstance(v, colander.All):
            validators.extend(v.validators)
        elif isinstance(v, colander.Length):
            if v.min is not None:
                schema["minLength" if schema.get("type") != "array" else "minItems"] = v.min
            if v.max is not None:
                schema["maxLength" if schema.get("type") != "array" else "maxItems"] = v.max
        elif isinstance(v, colander.Range):  # numbers only; date ranges are described in words
            if isinstance(v.min, int | float):
                schema["minimum"] = v.min
            if isinstance(v.max, int | float):
                schema["maximum"] = v.max
        elif isinstance(v, colander.OneOf):
            schema["enum"] = list(v.choices)
        elif isinstance(v, colander.Regex):
            schema["pattern"] = v.match_object.pattern
        if getattr(v, "openapi", None):  # a validator function describing itself
            schema.update(v.openapi)


def node_schema(node: colander.SchemaNode) -> dict[str, Any]:
    """JSON Schema (2020-12, as OpenAPI 3.1 uses) of a colander node."""
    typ = node.typ
    if isinstance(typ, colander.Mapping):
        properties, required = {}, []
        for child in node.children:
            properties[child.name] = node_schema(child)
            if child.missing is colander.required:
                required.append(child.name)
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if required:
            schema["required"] = required
        # Unknown fields are refused (ehs_core.validation.unknown_fields).
        schema["additionalProperties"] = typ.unknown == "preserve"
        if getattr(typ, "nullable", False):
            schema["type"] = ["object", "null"]
        return schema
    if isinstance(typ, colander.Sequence):
        schema = {"type": "array", "items": node_schema(node.children[0])}
        _length(node, schema)
        return schema
    schema = _scalar(typ)
    if node.description:
        schema["description"] = node.description
    _length(node, schema)
    if isinstance(typ, s.Str) and typ.strip and schema.get("minLength") and "pattern" not in schema:
        schema["pattern"] = r"\S"  # white space alone is stripped to nothing
    if getattr(typ, "rule", None):
        schema["description"] = f"{schema['description']}. {typ.rule}" if "description" in schema \
            else typ.rule
    if getattr(typ, "nullable", False):
        if "type" not in schema:
            return {"anyOf": [schema, {"type": "null"}]}
        schema["type"] = [schema["type"], "null"]
        if "enum" in schema:
            schema["enum"] = [*schema["enum"], None]
    return schema


def _scalar(typ: colander.SchemaType) -> dict[str, Any]:
    if isinstance(typ, s.Choice):
        return {"type": "string", "enum": [m.value for m in typ.enum]}
    if isinstance(typ, s.Bool):
        return {"type": "boolean"}
    if isinstance(typ, s.Int):
        return {"type": "integer", "minimum": s.INT_MIN, "maximum": s.INT_MAX}
    if isinstance(typ, s.Number):
        return {"type": "number"}
    if isinstance(typ, s.Date):
        return {"type": "string", "format": "date", "pattern": s.DATE_PATTERN}
    if isinstance(typ, s.Several):  # a repeated query parameter (form style, exploded)
        return {"type": "array", "items": _scalar(typ.item), "maxItems": typ.max_items}
    if isinstance(typ, s.StrList):
        return {"type": "array", "items": {"type": "string", "maxLength": typ.max_length},
                "maxItems": typ.max_items}
    if isinstance(typ, s.QueryInt):
        return {"type": "integer", "minimum": -s.QUERY_INT_MAX, "maximum": s.QUERY_INT_MAX}
    if isinstance(typ, s.QueryBool):
        return {"type": "string", "enum": ["true", "false", "1", "0"]}
    if hasattr(typ, "openapi_schema"):
        return dict(typ.openapi_schema)
    return {"type": "string", **getattr(typ, "openapi", {})}


def _placeholders(pattern: str) -> tuple[str, list[tuple[str, str]]]:
    """Pyramid route pattern -> OpenAPI path and its (name, regex) pairs;
    regexes may hold braces themselves ({id:\\d{1,9}})."""
    path, found, i = "", [], 0
    while i < len(pattern):
        if pattern[i] != "{":
            path += pattern[i]
            i += 1
            continue
        depth, j = 1, i + 1
        while depth:
            depth += {"{": 1, "}": -1}.get(pattern[j], 0)
            j += 1
        name, _, regex = pattern[i + 1:j - 1].partition(":")
        found.append((name, regex))
        path += "{" + name + "}"
        i = j
    return path, found


def _parameters(pattern: str, query: Any, registry: Registry) -> tuple[str, list[dict[str, Any]]]:
    params = []
    path, found = _placeholders(pattern)
    for name, regex in found:
        schema: dict[str, Any] = {"type": "integer", "minimum": 0} if "\\d" in regex else {"type": "string"}
        params.append({"name": name, "in": "path", "required": True, "schema": schema})
    if query is not None:
        for child in schema_of(query, registry).children:
            params.append({"name": child.name, "in": "query",
                           "required": child.missing is colander.required, "schema": node_schema(child)})
    return path, params


def _operation(route_name: str, path_params: tuple[str, list], view: Any, registry: Registry,
               permission: str | None) -> dict:
    body, multipart = view.get("body"), view.get("multipart")
    if permission == NO_PERMISSION_REQUIRED:
        security: list[dict[str, list]] = []
    else:  # a view may name another scheme (a plugin's token); else the session
        security = view.get("security") or [{"sessionCookie": []}]
    operation: dict[str, Any] = {
        "operationId": f"{route_name}.{'_'.join(sorted(view['request_methods']))}".replace(".", "_"),
        "parameters": path_params[1],
        "security": security,
        "responses": {},
    }
    if view.get("summary"):
        operation["summary"] = view["summary"]
    if body is not None:
        operation["requestBody"] = {"required": True, "content": {
            "application/json": {"schema": node_schema(schema_of(body, registry))}}}
    elif multipart:
        # Kinds: "file", "files" (optional), "json", "uuid" (an optional
        # idempotency key, `clientId`).
        props = {name: ({"type": "string", "contentMediaType": "application/octet-stream"} if kind == "file"
                        else {"type": "array", "items": {"type": "string",
                                                         "contentMediaType": "application/octet-stream"}}
                        if kind == "files" else {"type": "string", "format": "uuid"} if kind == "uuid"
                        else {"type": "string", "contentMediaType": "application/json"})
                 for name, kind in multipart.items()}
        required = [name for name, kind in multipart.items() if kind not in ("files", "uuid")]
        operation["requestBody"] = {"required": True, "content": {"multipart/form-data": {"schema": {
            "type": "object", "properties": props, "required": required}}}}
    for status in view.get("responses") or (200,):
        response: dict[str, Any] = {"description": SUCCESS_TEXT.get(status, "OK")}
        if status != 204:
            answer = view.get("answer") or {}
            response["content"] = {view.get("media", "application/json"): {"schema": answer}}
        operation["responses"][str(status)] = response
    for status, text in ERROR_STATUSES.items():
        operation["responses"][status] = {"description": text, "content": {
            "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
    return operation


def build(registry: Registry) -> dict[str, Any]:
    introspector = registry.introspector
    paths: dict[str, dict[str, Any]] = {}
    for route in introspector.get_category("routes"):
        route_intr = route["introspectable"]
        pattern = route_intr["pattern"]
        if not pattern.startswith("/api/"):
            continue
        for related in introspector.related(route_intr):
            if related.category_name != "views" or not related["request_methods"]:
                continue
            path, params = _parameters(pattern, related.get("query"), registry)
            methods = related["request_methods"]
            methods = [methods] if isinstance(methods, str) else methods
            for method in methods:
                if method == "HEAD":
                    continue
                view = dict(related) | {"request_methods": [method]}
                permission = next((p["value"] for p in introspector.related(related)
                                   if p.category_name == "permissions"), None)
                paths.setdefault(path, {})[method.lower()] = _operation(
                    route_intr["name"], (path, params), view, registry, permission)
    return {
        "openapi": "3.1.0",
        "info": {"title": "EHS incident service", "version": "1",
                 "description": "Workplace-safety incident service. Generated from the running "
                                "configuration: the core and the enabled plugins "
                                f"({', '.join(enabled_plugins(registry)) or 'none'})."},
        "paths": dict(sorted(paths.items())),
        # What the service POSTs to the endpoints admins register (ehs_core.webhooks).
        "webhooks": openapi_webhooks(registry),
        "components": {
            "schemas": {"Error": ERROR},
            "securitySchemes": {
                "sessionCookie": {"type": "apiKey", "in": "cookie", "name": "service_session"},
                **registry.get("security_schemes", {}),
            },
        },
    }


@view_config(route_name="openapi", request_method="GET", renderer="json", permission=NO_PERMISSION_REQUIRED)
def openapi(request: Request) -> dict[str, Any]:
    registry = request.registry
    if "openapi" not in registry:
        registry["openapi"] = build(registry)
    return registry["openapi"]


def add_security_scheme(config: Configurator, name: str, scheme: dict[str, Any]) -> None:
    """Directive: describe another way of authenticating (a plugin's token);
    views name it with the `security=[{name: []}]` view option."""

    def register() -> None:
        config.registry.setdefault("security_schemes", {})[name] = scheme

    register_once(config, "ehs.security_scheme", name, register)


def includeme(config: Configurator) -> None:
    config.add_directive("add_security_scheme", add_security_scheme)
    config.add_route("openapi", "/api/openapi.json")
    config.scan(__name__)
