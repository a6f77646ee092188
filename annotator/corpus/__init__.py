"""The data in and out: imports (CogniBench, RefChecker, JSONL), exports (gold JSONL, CogniBench), their jobs and pages."""
