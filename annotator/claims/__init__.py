"""The finer views of a hallucination: RefChecker claim triplets, HalluDetect severity, Face4RAG error types."""
