"""Typed records of the results document: plain dataclasses that read and write their JSON
(`from_dict`, `to_dict`) and state their own JSON Schema (`json_schema`).

Plain dataclasses and no pydantic: the GPU images that measure have neither pydantic nor
jsonschema, and the records must load there. `from_dict` checks what the schema's types and
bounds say (a wrong field is one DocumentError naming its path); the conditional rules that a
record adds to its schema (`RULES`: if/then, dependentRequired) are jsonschema's alone.

A field without a default is required; `field()` with no default is optional and, when the
document does not hold it, stays absent (ABSENT) and is not written back. Keys a record does not
declare are kept in `extra`, so a newer rooflab's fields survive a round trip.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import types
import typing
from typing import Any, ClassVar


class _Absent:
    """A field the document does not hold (distinct from null)."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "ABSENT"

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (_Absent, ())


ABSENT: Any = _Absent()


class DocumentError(ValueError):
    """One thing wrong with a document: where (a path like gemm.rungs[0].timing) and what."""

    def __init__(self, path: str, what: str):
        self.path, self.what = path, what
        super().__init__(f"{path}: {what}" if path else what)


BOUND_WORDS = {"minimum": "at least", "exclusiveMinimum": "greater than", "maximum": "at most",
               "exclusiveMaximum": "less than"}  # "3 is not at least 5": jsonschema's words, in results' messages too
_BOUNDS = {"minimum": "minimum", "exclusive_minimum": "exclusiveMinimum", "maximum": "maximum",
           "exclusive_maximum": "exclusiveMaximum", "min_items": "minItems", "max_items": "maxItems"}


def field(default: Any = ABSENT, *, required: bool = False, description: str | None = None,
          items: dict | None = None, schema: dict | None = None, **bounds) -> Any:
    """A record field, optional unless `required`. `bounds`: minimum, exclusive_minimum, maximum, exclusive_maximum, min_items,
    max_items (of the value); `items`: the same keywords, in JSON Schema spelling, for each item of a
    list or value of a mapping; `schema`: JSON Schema keywords added to the field's as they are."""
    unknown = set(bounds) - set(_BOUNDS)
    if unknown:
        raise TypeError(f"unknown field bounds {sorted(unknown)}")
    meta = {"bounds": {_BOUNDS[k]: v for k, v in bounds.items()}, "items": items or {}, "schema": schema or {},
            "description": description}
    if required:
        return dataclasses.field(metadata=meta)
    if isinstance(default, (list, dict)):
        value = default
        return dataclasses.field(default_factory=lambda: type(value)(value), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def short(value, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 5] + " …" + text[-3:]


def join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


_KEYS: dict[str, str] = {}  # schema name -> the record's qualified name: two records never share a name


@dataclasses.dataclass(kw_only=True)
class Record:
    """The base of every record: undeclared keys in `extra`, conversion and schema by the annotations."""

    extra: dict = dataclasses.field(default_factory=dict, repr=False, compare=True)

    KEY: ClassVar[str | None] = None  # its name under the schema's $defs (snake case of the class by default)
    RULES: ClassVar[dict] = {}  # JSON Schema keywords beyond the fields' (if/then/else, dependentRequired)

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        key, name = cls.schema_key(), f"{cls.__module__}.{cls.__qualname__}"
        if _KEYS.setdefault(key, name) != name:
            raise TypeError(f"{name}: the schema already has a record named {key} ({_KEYS[key]})")

    @classmethod
    def from_dict(cls, data, path: str = ""):
        if not isinstance(data, dict):
            raise DocumentError(path, f"{short(data)} is not of type 'object'")
        missing = [f.name for f in fields_of(cls) if f.required and f.name not in data]
        if missing:
            raise DocumentError(path, required_message(missing))
        values = {}
        for f in fields_of(cls):
            if f.name in data:
                values[f.name] = load(f.type, data[f.name], join(path, f.name), f.meta)
        known = {f.name for f in fields_of(cls)}
        return cls(**values, extra={k: v for k, v in data.items() if k not in known})

    def to_dict(self) -> dict:
        out = {}
        for f in fields_of(type(self)):
            value = getattr(self, f.name)
            if value is not ABSENT:
                out[f.name] = dump(value)
        out.update(self.extra)
        return out

    @classmethod
    def schema_key(cls) -> str:
        return cls.__dict__.get("KEY") or re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()

    @classmethod
    def json_schema(cls, defs: dict) -> dict:
        """This record's schema, placed in `defs` (with every record it holds); returns the $ref to it."""
        key = cls.schema_key()
        if key not in defs:
            defs[key] = {}  # placed first: a record that holds itself refers to it
            part: dict = {}
            doc = description_of(cls)
            if doc:
                part["description"] = doc
            # no "type" here: a field that refers to a record says "object" (or "object" or null) beside its $ref
            required = [f.name for f in fields_of(cls) if f.required]
            if required:
                part["required"] = required
            part["properties"] = {f.name: field_schema(f, defs) for f in fields_of(cls)}
            part.update(cls.RULES)
            defs[key] = part
        return {"$ref": f"#/$defs/{key}"}


def required_message(missing: list[str]) -> str:
    if len(missing) == 1:
        return f"{missing[0]!r} is a required property"
    return f"{', '.join(repr(k) for k in missing)} are required properties"


def description_of(cls) -> str | None:
    doc = cls.__dict__.get("__doc__")
    if not doc or doc.startswith(cls.__name__ + "("):  # dataclass's generated signature
        return None
    return " ".join(doc.split())


@dataclasses.dataclass(frozen=True)
class Field:
    name: str
    type: Any
    required: bool
    meta: dict


@functools.cache
def fields_of(cls) -> tuple[Field, ...]:
    hints = typing.get_type_hints(cls)
    out = []
    for f in dataclasses.fields(cls):
        if f.name == "extra":
            continue
        has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        out.append(Field(f.name, hints[f.name], not has_default,
                         dict(f.metadata) or {"bounds": {}, "items": {}, "schema": {}, "description": None}))
    return tuple(out)


# ---------------------------------------------------------------- types: load, dump, schema

_JSON_TYPE = {int: "integer", float: "number", str: "string", bool: "boolean", type(None): "null",
              dict: "object", list: "array"}


def _is_record(tp) -> bool:
    return isinstance(tp, type) and issubclass(tp, Record)


def _members(tp) -> tuple | None:
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        return typing.get_args(tp)
    return None


def _matches(tp, value) -> bool:
    """Whether `value` has JSON type `tp` (int is a number; a bool is neither)."""
    if tp is Any:
        return True
    base = typing.get_origin(tp) or tp
    if _is_record(base):
        base = dict
    if isinstance(value, bool):
        return base is bool
    if base is float:
        return isinstance(value, (int, float))
    return isinstance(value, base)


def _type_names(tp) -> list[str]:
    members = _members(tp) or (tp,)
    return [_JSON_TYPE[dict if _is_record(m) else (typing.get_origin(m) or m)] for m in members if m is not Any]


def load(tp, value, path: str, meta: dict | None = None):
    members = _members(tp)
    if members is not None:
        match = next((m for m in members if _matches(m, value)), None)
        if match is None:
            raise DocumentError(path, not_of_type(value, _type_names(tp)))
        return load(match, value, path, meta)
    if not _matches(tp, value):
        raise DocumentError(path, not_of_type(value, _type_names(tp)))
    if meta:
        _check_bounds(value, meta["bounds"], path)
    if _is_record(tp):
        return tp.from_dict(value, path)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    item_meta = {"bounds": (meta or {}).get("items") or {}, "items": {}, "schema": {}}
    if origin is list and args:
        return [load(args[0], v, join(path, i), item_meta) for i, v in enumerate(value)]
    if origin is dict and args:
        return {k: load(args[1], v, join(path, k), item_meta) for k, v in value.items()}
    return value


def not_of_type(value, names: list[str]) -> str:
    return f"{short(value)} is not of type {' or '.join(repr(n) for n in names)}"


def _check_bounds(value, bounds: dict, path: str) -> None:
    for key, limit in bounds.items():
        if key in ("minItems", "maxItems"):
            if isinstance(value, list) and (len(value) < limit if key == "minItems" else len(value) > limit):
                word = "is too short" if key == "minItems" else "is too long"
                raise DocumentError(path, f"{short(value)} {word}")
            continue
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            continue
        bad = {"minimum": value < limit, "exclusiveMinimum": value <= limit, "maximum": value > limit,
               "exclusiveMaximum": value >= limit}[key]
        if bad:
            raise DocumentError(path, f"{short(value)} is not {BOUND_WORDS[key]} {limit}")


def dump(value):
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, list):
        return [dump(v) for v in value]
    if isinstance(value, dict):
        return {k: dump(v) for k, v in value.items()}
    return value


def field_schema(f: Field, defs: dict) -> dict:
    out = type_schema(f.type, defs, f.meta)
    if f.meta.get("description"):
        out = {"description": f.meta["description"], **out}
    return out


def type_schema(tp, defs: dict, meta: dict | None = None) -> dict:
    meta = meta or {"bounds": {}, "items": {}, "schema": {}}
    members = _members(tp)
    if members is not None:
        simple = [m for m in members if not _is_record(m) and not typing.get_args(m) and m is not Any]
        records = [m for m in members if _is_record(m)]
        if len(simple) == len(members):
            out = {"type": [_JSON_TYPE[m] for m in members]}
        elif len(records) == 1 and len(records) + len(simple) == len(members):
            # one record or a null: one type list, so a wrong field is named inside the record
            out = {"type": [_JSON_TYPE[dict if _is_record(m) else m] for m in members], **records[0].json_schema(defs)}
        else:
            out = {"anyOf": [type_schema(m, defs) for m in members]}
    elif tp is Any:
        out = {}
    elif _is_record(tp):
        out = {"type": "object", **tp.json_schema(defs)}
    else:
        origin, args = typing.get_origin(tp) or tp, typing.get_args(tp)
        out = {"type": _JSON_TYPE[origin]}
        item = {**type_schema(args[-1], defs), **meta.get("items", {})} if args else None
        if origin is list and args:
            out["items"] = item
        elif origin is dict and args:
            out["additionalProperties"] = item
    if "anyOf" in out and meta["bounds"]:
        out["anyOf"] = [({**m, **meta["bounds"]} if m.get("type") != "null" else m) for m in out["anyOf"]]
    else:
        out.update(meta["bounds"])
    if members is not None and meta.get("items"):  # items of a list that may be null
        for m in out.get("anyOf", []):
            if "items" in m:
                m["items"].update(meta["items"])
    out.update(meta.get("schema", {}))
    return out
