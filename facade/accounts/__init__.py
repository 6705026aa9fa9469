"""Signing in: lock-out after repeated failures (django-axes) and two-step sign-in with a TOTP
code (django-otp).  No models of its own: axes and django-otp keep theirs."""
