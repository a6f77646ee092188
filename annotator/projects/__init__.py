"""Projects, their settings and their people."""
