"""Faithfulness per generator model: the estimators (pure), the aggregate counts, the report, its chart and page."""
