"""Run documents as tests read them: the JSON form (what docs/schema.md
promises on disk), checked by loading it through the one reader first."""
from pathlib import Path

from fabriclab import schema


def read(path) -> dict:
    """The document at path (RUN.json or RUN.ndjson) as JSON data, after schema.load has checked it."""
    return schema.load(Path(path)).to_dict()


def points(doc: dict) -> list:
    """Its point records, as written."""
    return [r for r in doc["records"] if r["kind"] == "point"]


def typed(doc: dict, where: str = "test document") -> schema.Document:
    """A document built as JSON data, read as every reader takes it."""
    return schema.Document.from_dict(doc, where)


def document(header: dict, records: list, footer: dict) -> dict:
    """A document's JSON form from its parts (records with their kind)."""
    head = {k: v for k, v in header.items() if k not in ("kind", "schema", "schema_version")}
    return {"schema": schema.SCHEMA, "schema_version": schema.SCHEMA_VERSION, "header": head,
            "records": records, "footer": {k: v for k, v in footer.items() if k != "kind"}}


def of(records: list, header: dict | None = None, status: str = "complete") -> schema.Document:
    """A document of typed records (points, skips, ...) as a run would hold them."""
    return schema.Document(schema.Header.from_dict(header or {}), list(records), schema.Footer(status))
