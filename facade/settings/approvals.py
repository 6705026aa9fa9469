"""The decision authority: how long one-time decision tokens and emailed codes live, how many
wrong codes a challenge takes and how many challenges an owner may start for one change."""

from .env import env_int, env_str

FACADE_DECISION_TOKEN_SECONDS = env_int("FACADE_DECISION_TOKEN_SECONDS", 300)
FACADE_OTP_CODE_SECONDS = env_int("FACADE_OTP_CODE_SECONDS", 600)
FACADE_OTP_MAX_FAILURES = env_int("FACADE_OTP_MAX_FAILURES", 5)
# New challenges per owner and change within the window (a resend is a new challenge).
FACADE_OTP_CHALLENGES = env_int("FACADE_OTP_CHALLENGES", 3)
FACADE_OTP_CHALLENGE_WINDOW_SECONDS = env_int("FACADE_OTP_CHALLENGE_WINDOW_SECONDS", 900)
# The code is sent inside the request: the SMTP connection may take this long before the
# challenge fails closed (email_unavailable).
FACADE_OTP_EMAIL_TIMEOUT = env_int("FACADE_OTP_EMAIL_TIMEOUT", 10)
# An L3 decision (authorize, verify, decide) needs a sign-in at most this old; after the code is
# verified the session id rotates.
FACADE_STEP_UP_FRESH_SECONDS = env_int("FACADE_STEP_UP_FRESH_SECONDS", 900)
# Authorisation attempts (authorize + verify + decide, any level) per owner: COUNT/SECONDS.
FACADE_RATE_AUTHORITY = env_str("FACADE_RATE_AUTHORITY", "30/900")
# The replay preview of a proposal (approvals/replay.py): how far back it looks, how many customer
# turns it replays at most (the ones the proposal concerns, and a sample of the others), how long
# one replay may take, and how many recent turns it scans to pick them.
FACADE_REPLAY_DAYS = env_int("FACADE_REPLAY_DAYS", 14)
FACADE_REPLAY_AFFECTED_MAX = env_int("FACADE_REPLAY_AFFECTED_MAX", 100)
FACADE_REPLAY_ELSEWHERE_MAX = env_int("FACADE_REPLAY_ELSEWHERE_MAX", 200)
FACADE_REPLAY_SCAN_MAX = env_int("FACADE_REPLAY_SCAN_MAX", 2000)
FACADE_REPLAY_SECONDS = env_int("FACADE_REPLAY_SECONDS", 300)
