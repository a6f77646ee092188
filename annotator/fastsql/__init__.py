"""The hand-written SQL of the hot paths: joined selects, conditional updates, bulk copy; columns from the models."""
