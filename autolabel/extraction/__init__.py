"""Claim-triplet extraction (RefChecker's extractor step): prompt, reply parser and baseline rule (triplets, pure), and the extraction and severity jobs (services)."""
