"""The offline baseline LLM: an OpenAI-compatible server (``server.py``) answering with a
lexical-overlap rule (``judge.py``), for the demo, the tests and the benchmarks.

Not part of the pre-labeler's runtime: jobs, prompts and parsing import nothing from here. The
``run_baseline_llm`` command serves it; the baseline rules of ``autolabel/extraction/triplets.py`` borrow the
judge's word overlap.
"""
