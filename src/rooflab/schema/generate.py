"""The results document's JSON Schema, generated from the records (rooflab.schema.document).

    python -m rooflab.schema.generate          # writes src/rooflab/schema/results.schema.json
    python -m rooflab.schema.generate --check  # exit 1 when the file is not what the records say
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rooflab.schema.document import FORMAT, Document
from rooflab.schema.typed import Record

SCHEMA_FILE = Path(__file__).parent / "results.schema.json"
SCHEMA_ID = "https://github.com/rooflab/rooflab/schema/results.schema.json"


def results_schema() -> dict:
    defs: dict = {}
    Document.json_schema(defs)
    root = defs[Document.schema_key()]  # also a $def: a fleet GPU's own document refers to it
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            "title": f"rooflab results document, format {FORMAT}", "type": "object", **root, "$defs": defs}


def section_schema(record: type[Record]) -> dict:
    """The JSON Schema of a section added beside rooflab's own (rooflab.report.section.Section's
    `schema`), from its typed record: self-contained, its records under its own $defs."""
    defs: dict = {}
    ref = record.json_schema(defs)
    return {"$id": f"urn:rooflab:section:{record.schema_key()}", "type": "object", **ref, "$defs": defs}


def text() -> str:
    return json.dumps(results_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    if argv[:1] == ["--check"]:
        return 0 if SCHEMA_FILE.read_text(encoding="utf-8") == text() else 1
    SCHEMA_FILE.write_text(text(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
