"""Change proposals and the decision authority (issue 12)."""
