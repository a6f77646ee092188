"""How a turn is labelled, pure (no database, no network): the prompt and its markers (prompting), the reply (parsing), the plan from prompt to predictions (pipeline) and the vote (voting)."""
