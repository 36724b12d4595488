"""Showing results: rows, tables and exporters (table, md, csv, json) of run documents."""

# The export formats, here so the command line can offer them without
# loading the exporters (tables.py checks it has one for each).
FORMATS = ("table", "json", "csv", "md")
