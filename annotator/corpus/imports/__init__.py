"""Imports: the formats (importers/), reading files into records (reading), writing records (records), the batch's life (services), the upload form and the import pages' reads."""
