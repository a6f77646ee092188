"""Exports: the formats (exporters/), the rows (selectors, stream, tables), the background export job (models, services)."""
