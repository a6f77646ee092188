"""Gold labels: agreement, adjudication, lead overrides and reopening."""
