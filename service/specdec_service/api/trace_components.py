"""The trace format in the contract, produced from its one source.

``engine/trace.schema.json`` (JSON Schema 2020-12, ``specdec-trace/1``) is the
only description of a trace and of its parts (block, proposal, verification
step, correction, target sample, draw, counters, config, ...). The OpenAPI
document holds it as components: the root as ``Trace`` and each ``$defs``
entry ``name`` as ``Trace<Name>`` (``block`` -> ``TraceBlock``,
``proposal_step`` -> ``TraceProposalStep``), references rewritten
(:func:`trace_components`). Response schemas that return a part of a trace
(``POST /v1/step``'s block, ``POST /v1/draft``'s proposal, the draws of
``GET /v1/draws``, a suite's configs) point at those components with a
:class:`TraceRef` field, so no schema repeats the format. A reading of the
format that differs from it (the grader's, which grades a wrong value instead
of refusing it) is published by :func:`variant_components`: only the parts
that differ get components of their own.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from marshmallow import fields

from ..engine import trace_schema
from ..engine.inputs import COMPONENTS as REQUEST_COMPONENTS, DEFS as REQUEST_DEFS

COMPONENTS = "#/components/schemas/"
ROOT = "Trace"
"""The component name of a whole trace."""


def component_name(definition: Optional[str] = None) -> str:
    """The component of ``$defs/<definition>`` (None: the whole trace), e.g. ``TraceProposalStep``."""
    if definition is None:
        return ROOT
    if definition not in trace_schema()["$defs"]:
        raise KeyError(f"trace.schema.json has no definition {definition!r}")
    return ROOT + "".join(part.capitalize() for part in definition.split("_"))


def ref(definition: Optional[str] = None) -> dict:
    """``{"$ref": ...}`` to the component of ``definition`` (None: the whole trace)."""
    return {"$ref": COMPONENTS + component_name(definition)}


def components_of_defs(node: Any, name_of: Callable[[str], str]) -> Any:
    """``node`` (a JSON Schema) with every ``#/$defs/<definition>`` reference pointing at the
    component ``name_of(definition)``."""
    if isinstance(node, dict):
        return {k: (COMPONENTS + name_of(v.rsplit("/", 1)[1]) if k == "$ref" else components_of_defs(v, name_of))
                for k, v in node.items()}
    if isinstance(node, list):
        return [components_of_defs(v, name_of) for v in node]
    return node


def _rewrite(node: Any) -> Any:
    return components_of_defs(node, component_name)


def trace_components() -> dict[str, dict]:
    """``{component name: JSON Schema}``: the trace schema's root (without
    ``$schema``, ``$id``, ``$defs`` and its ``title`` ``specdec-trace/1``: a component's
    title is its name, :func:`.openapi.build_spec`) and each of its definitions, with every
    ``#/$defs/x`` reference pointing at the component of ``x``."""
    schema = trace_schema()
    components = {ROOT: _rewrite({k: v for k, v in schema.items() if k not in ("$schema", "$id", "$defs", "title")})}
    components.update((component_name(name), _rewrite(d)) for name, d in schema["$defs"].items())
    return components


def _references(node: Any) -> set[str]:
    """The ``$defs`` names that ``node`` refers to (``#/$defs/<name>``), directly."""
    if isinstance(node, dict):
        found = {node["$ref"].rsplit("/", 1)[1]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(_references(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_references(v) for v in node))
    return set()


def variant_components(variant: dict, root: str, prefix: str) -> dict[str, dict]:
    """``{component name: JSON Schema}`` of ``variant``, a copy of the trace schema with some
    definitions changed (e.g. the grader's relaxed reading, ``grading.grading_schema``): its
    root as ``root``; each definition that differs from the trace schema's, or refers to one
    that does, as ``prefix + <Name> + "In"`` (``GradeTraceBlockIn``); every other reference
    points at the trace's own component (``TraceDraw``), so nothing unchanged is repeated.
    The components validate exactly what ``variant`` validates."""
    base, defs = trace_schema()["$defs"], variant["$defs"]
    changed = {name for name, schema in defs.items() if schema != base.get(name)}
    while True:  # whatever refers to a changed definition is changed (the schema is not recursive)
        grown = changed | {name for name, schema in defs.items() if _references(schema) & changed}
        if grown == changed:
            break
        changed = grown

    def name_of(definition: str) -> str:
        if definition not in changed:
            return component_name(definition)
        return prefix + "".join(part.capitalize() for part in definition.split("_")) + "In"

    top = {k: v for k, v in variant.items() if k not in ("$schema", "$id", "$defs")}
    components = {root: components_of_defs(top, name_of)}
    components.update((name_of(name), components_of_defs(defs[name], name_of)) for name in defs if name in changed)
    return components


def request_components() -> dict[str, dict]:
    """``{component name: JSON Schema}`` of the request bodies the engine reads, produced
    from their one statement (:data:`specdec_service.engine.inputs.DEFS`, the schemas the
    parsers check): ``ConfigIn``, ``StateIn``, ``VerifyIn``, ``RunIn``, ``AnalysisIn``, ...,
    every ``#/$defs/x`` reference pointing at the component of ``x``."""
    return {REQUEST_COMPONENTS[name]: components_of_defs(schema, REQUEST_COMPONENTS.__getitem__)
            for name, schema in REQUEST_DEFS.items()}


class TraceRef(fields.Raw):
    """A marshmallow field documented as a reference to a trace component
    (``definition`` of ``trace.schema.json``; None for a whole trace).

    Response schemas are documentation (the service does not dump through
    them), so the field only needs its place in the contract:
    :func:`trace_ref_attribute` makes it ``{"$ref": ...}`` (plus its
    ``description``, if any).
    """

    def __init__(self, definition: Optional[str] = None, **kwargs: Any) -> None:
        component_name(definition)  # fail at import on a name the schema lacks
        self.definition = definition
        super().__init__(**kwargs)


def trace_ref_attribute(self, field: fields.Field, **kwargs: Any) -> dict:
    """An apispec attribute function (``converter.add_attribute_function``):
    a :class:`TraceRef` field is the ``$ref`` of its component."""
    return ref(field.definition) if isinstance(field, TraceRef) else {}
