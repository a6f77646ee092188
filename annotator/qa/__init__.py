"""Questions in real time, feedback after the fact, and the qualification set."""
