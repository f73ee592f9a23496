"""The results document, typed: a record per section (dataclasses that read and write their JSON),
the format history and its migrations (document.py), and the JSON Schema generated from the
records (generate.py; the committed results.schema.json is its output)."""
