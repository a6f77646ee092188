"""Draws of turns for human checks: the records (models) and the service that records and reads them."""
