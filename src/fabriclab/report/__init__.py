"""Showing results: rows, tables and exporters (table, md, csv, json) of run documents."""
