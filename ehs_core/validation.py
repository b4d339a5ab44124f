"""Reading and validating what a request brings: the one JSON parser
(`parse_json`, `json_body`) and the running of colander schemas on bodies and
query strings, declared on views with `body=` and `query=` (`validated_view`)
so that validation and the OpenAPI document come from one declaration. Every
problem is answered as one 400 naming each field (ehs_core.errors)."""

from __future__ import annotations

import json
from typing import Any

import colander
from pyramid.request import Request

from ehs_core.errors import APIError, issues_from_invalid
from ehs_core.schemas import Several, text_problem

# The deepest body this API takes has three levels (hours entries, saved-view
# filters); anything much deeper is an attack on the parser, not data.
MAX_DEPTH = 8


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def _bad(path: str, message: str) -> APIError:
    return APIError(400, "Invalid request", [{"path": path, "message": message}])


def _join(path: str, key: str | int) -> str:
    return f"{path}.{key}" if path else str(key)


def parse_json(raw: bytes, path: str = "") -> Any:
    """JSON text -> value, or a 400 naming what is wrong. The one place
    request JSON is parsed (bodies and the kiosk's `report` part): besides
    syntax it refuses nesting deeper than MAX_DEPTH (a recursion bomb would
    crash the parser or the database's JSON encoder), NaN and Infinity
    (not JSON), numbers too long to convert, and text the database cannot
    store, so nothing downstream meets them."""
    try:
        value = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:
        raise _bad(path, f"Nested too deeply (at most {MAX_DEPTH} levels)") from None
    except UnicodeDecodeError:
        raise _bad(path, "Malformed JSON: the body must be UTF-8 text") from None
    except ValueError as exc:
        if "digits" in str(exc):  # int() refuses more than 4300 digits
            raise _bad(path, "A number has too many digits") from None
        raise _bad(path, "Malformed JSON") from None
    stack = [(value, path, 1)]
    while stack:
        item, where, depth = stack.pop()
        if depth > MAX_DEPTH and isinstance(item, dict | list):
            raise _bad(where, f"Nested too deeply (at most {MAX_DEPTH} levels)")
        if isinstance(item, str):
            problem = text_problem(item)
            if problem:
                raise _bad(where, problem)
        elif isinstance(item, dict):
            for key, child in item.items():
                problem = text_problem(key)
                if problem:
                    raise _bad(where, f"Field names: {problem[0].lower()}{problem[1:]}")
                stack.append((child, _join(where, key), depth + 1))
        elif isinstance(item, list):
            stack.extend((child, _join(where, index), depth + 1) for index, child in enumerate(item))
    return value


def json_limit(request: Request) -> int:
    """Bytes a JSON body may have (`ehs.max_json_kb`)."""
    return request.registry.settings["ehs.max_json_kb"] * 1024


def json_body(request: Request, array: bool = False) -> Any:
    """The request's JSON object. Anything but `application/json` is refused:
    a JSON API that also accepted text/plain or form bodies would let another
    site post to it without a CORS preflight. A body with a Content-Length
    over the limit was refused before any view (`ehs_core.intake`); one
    without (chunked) is read only up to the limit."""
    if request.content_type != "application/json":
        raise APIError(415, "Send the body as application/json")
    limit = json_limit(request)
    raw = request.body if request.content_length is not None else request.body_file.read(limit + 1)
    if len(raw) > limit:
        raise APIError(413, f"The body is too large (at most {limit // 1024} KiB)")
    body = parse_json(raw or b"null")
    if array and not isinstance(body, list):
        raise _bad("", "The body must be a JSON array")
    if not array and not isinstance(body, dict):
        raise _bad("", "The body must be a JSON object")
    return body


def unknown_fields(node: colander.SchemaNode, value: Any, path: str = "") -> list[dict[str, str]]:
    """Fields of `value` the schema does not know, each named with what to
    use instead: a field a call silently dropped would let the client
    believe it was stored. A schema lists fields that exist but are changed
    elsewhere in its `changed_elsewhere` mapping (field -> where); a
    mapping declared `unknown="preserve"` takes any field."""
    issues: list[dict[str, str]] = []
    if isinstance(node.typ, colander.Mapping) and isinstance(value, dict):
        if node.typ.unknown == "preserve":
            return issues
        children = {child.name: child for child in node.children}
        elsewhere = getattr(node, "changed_elsewhere", {})
        for key, child_value in value.items():
            child = children.get(key)
            if child is not None:
                issues.extend(unknown_fields(child, child_value, _join(path, key)))
            elif key in elsewhere:
                issues.append({"path": _join(path, key), "message": elsewhere[key]})
            else:
                known = ", ".join(children) or "none"
                issues.append({"path": _join(path, key),
                               "message": f"Unknown field; the fields this call takes are: {known}"})
    elif isinstance(node.typ, colander.Sequence) and isinstance(value, list) and node.children:
        for index, item in enumerate(value):
            issues.extend(unknown_fields(node.children[0], item, _join(path, index)))
    return issues


def deserialize(schema: colander.SchemaNode, value: Any, path: str = "", strict: bool = True) -> Any:
    """Run a schema over parsed JSON; every problem (unknown fields unless
    not `strict`, and colander's findings in the user's words) in one 400."""
    issues = unknown_fields(schema, value, path) if strict else []
    try:
        result = schema.deserialize(value)
    except colander.Invalid as exc:
        issues.extend({"path": _join(path, issue["path"]) if issue["path"] else path,
                       "message": issue["message"]} for issue in issues_from_invalid(exc))
    if issues:
        raise APIError(400, "Invalid request", sorted(issues, key=lambda issue: issue["path"]))
    return result


def validate_body(request: Request, schema: colander.SchemaNode) -> Any:
    return deserialize(schema, json_body(request, array=isinstance(schema.typ, colander.Sequence)))


def validate_query(request: Request, schema: colander.SchemaNode) -> dict[str, Any]:
    params: dict[str, Any] = {}
    repeated = []
    for key in dict.fromkeys(request.GET.keys()):
        values = request.GET.getall(key)
        node = schema.get(key)
        if node is not None and isinstance(node.typ, Several):
            params[key] = values
        elif len(values) > 1 and node is not None:
            repeated.append({"path": key, "message": "Give this parameter once"})
        else:
            params[key] = values[-1]
    if repeated:
        raise APIError(400, "Invalid request", repeated)
    # Unknown query parameters are ignored, as the web's caches and tools add their own.
    return deserialize(schema, params, strict=False)


SchemaSource = Any  # a schema class, a schema node, or a callable(registry) -> node


def schema_of(source: SchemaSource, registry: Any) -> colander.SchemaNode:
    if isinstance(source, colander.SchemaNode):
        return source.clone()
    if isinstance(source, type) and issubclass(source, colander.SchemaNode):
        return source()
    return source(registry)


def validated_view(view: Any, info: Any) -> Any:
    """View deriver: a view declared with `body=` and/or `query=` gets its
    request validated by those colander schemas before it runs (after the
    permission check), the results in `request.validated` and
    `request.validated_query`. The same declarations feed the OpenAPI
    document, so documentation and validation cannot drift apart."""
    body = info.options.get("body")
    query = info.options.get("query")
    if body is None and query is None:
        return view

    # The schemas, made on first use (once per view: colander makes every
    # child node again for each instance, and running a schema changes
    # nothing in it, so one serves every request).
    made: dict[str, colander.SchemaNode] = {}

    def schema(kind: str, source: SchemaSource, registry: Any) -> colander.SchemaNode:
        node = made.get(kind)
        if node is None:
            node = made[kind] = schema_of(source, registry)
        return node

    def wrapper(context: Any, request: Request) -> Any:
        if query is not None:
            request.validated_query = validate_query(request, schema("query", query, request.registry))
        if body is not None:
            request.validated = validate_body(request, schema("body", body, request.registry))
        return view(context, request)

    return wrapper


# View options the deriver reads; `responses` lists the success statuses for
# the API description, `multipart` names the file fields of upload endpoints,
# `answer` is the JSON Schema of the success answer.
validated_view.options = ("body", "query", "responses", "multipart", "summary", "media", "security", "answer")


def includeme(config: Any) -> None:
    config.add_view_deriver(validated_view)
