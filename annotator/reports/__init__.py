"""Agreement, gold breakdowns and the protocol comparison, with their charts."""
