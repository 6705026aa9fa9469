"""The outgoing check: the commitment guard, the grounding check for figures and the quoting
rule, behind one entry point (`guard.outgoing.outgoing_check`)."""
