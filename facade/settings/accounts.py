"""Signing in: lock-out after repeated wrong passwords (django-axes) and two-step sign-in."""

from __future__ import annotations

from datetime import timedelta

from .env import env_int, env_str

# Wrong passwords for one account from one client address before that pair is locked out.
FACADE_LOGIN_FAILURE_LIMIT = env_int("FACADE_LOGIN_FAILURE_LIMIT", 5)
# Wrong passwords for one account from all addresses together before the account is locked for
# everyone (0: never).  Higher than the pair's limit, so one address alone can never lock a
# victim out, while spraying one account from many addresses still stops.
FACADE_LOGIN_ACCOUNT_FAILURE_LIMIT = env_int("FACADE_LOGIN_ACCOUNT_FAILURE_LIMIT", 30)
FACADE_LOGIN_COOLOFF_MINUTES = env_int("FACADE_LOGIN_COOLOFF_MINUTES", 15)
if FACADE_LOGIN_FAILURE_LIMIT < 1 or FACADE_LOGIN_COOLOFF_MINUTES < 1 or FACADE_LOGIN_ACCOUNT_FAILURE_LIMIT < 0:
    raise ValueError(
        "FACADE_LOGIN_FAILURE_LIMIT and FACADE_LOGIN_COOLOFF_MINUTES must be at least 1, "
        "FACADE_LOGIN_ACCOUNT_FAILURE_LIMIT at least 0"
    )

# Axes looks at every authenticate() call; it must come before the backend that checks passwords.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_HANDLER = "facade.accounts.throttle.LoginThrottle"
AXES_FAILURE_LIMIT = FACADE_LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(minutes=FACADE_LOGIN_COOLOFF_MINUTES)
# The first entry is the pair (account, address); the second the account alone, counted against
# FACADE_LOGIN_ACCOUNT_FAILURE_LIMIT by LoginThrottle.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "username"]
AXES_RESET_ON_SUCCESS = True
# Attempts refused while locked out neither count nor extend the cool-off: the lock-out ends on
# time, and one address cannot add to an account's total beyond its own limit.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "facade.accounts.views.locked_out"
# The client's address as the rate limits read it: X-Forwarded-For only from FACADE_TRUSTED_PROXIES,
# so that everyone behind a proxy is not one address to the lock-out.
AXES_CLIENT_IP_CALLABLE = "facade.accounts.throttle.client_address"
# Axes keeps the form fields of a failed attempt; the password and the code are masked.
AXES_SENSITIVE_PARAMETERS = ["otp_token", "code"]

# Two-step sign-in (django-otp): the name authenticator apps show beside the account.
OTP_TOTP_ISSUER = env_str("FACADE_TOTP_ISSUER", "Facade")

# The team (issue 32 §2): how long an e-mailed invitation's one-time link works, how long the
# SMTP connection may take while it is sent inside the request (a failure makes no invitation),
# and how many invitations one person may send (COUNT/SECONDS).
FACADE_INVITATION_DAYS = env_int("FACADE_INVITATION_DAYS", 7)
FACADE_INVITATION_EMAIL_TIMEOUT = env_int("FACADE_INVITATION_EMAIL_TIMEOUT", 10)
FACADE_RATE_INVITATIONS = env_str("FACADE_RATE_INVITATIONS", "20/3600")
if FACADE_INVITATION_DAYS < 1:
    raise ValueError("FACADE_INVITATION_DAYS must be at least 1")

# Self-service sign-up of a business (issue 32 §1): `off` (the default: businesses join through a
# platform operator, /signup/ answers 404), `invite` (the same, and /signup/ tells visitors to ask
# the platform for an invitation), `open` (anyone may sign a business up; nothing is created until
# the e-mailed link is opened, within FACADE_SIGNUP_LINK_HOURS).  Sign-up links sent per address
# and per client address are limited (COUNT/SECONDS).
FACADE_SIGNUP = env_str("FACADE_SIGNUP", "off").strip().lower()
if FACADE_SIGNUP not in ("off", "invite", "open"):
    raise ValueError("FACADE_SIGNUP is one of off, invite, open")
FACADE_SIGNUP_LINK_HOURS = env_int("FACADE_SIGNUP_LINK_HOURS", 24)
FACADE_RATE_SIGNUP = env_str("FACADE_RATE_SIGNUP", "3/3600")
FACADE_RATE_SIGNUP_IP = env_str("FACADE_RATE_SIGNUP_IP", "10/3600")

# A forgotten password (Django's reset flow) and a changed e-mail address: reset e-mails per
# address and per client address, e-mail change confirmations per account (COUNT/SECONDS), and
# how long an e-mail change's link works.  Django's PASSWORD_RESET_TIMEOUT (seconds) is the reset
# link's life.
FACADE_RATE_PASSWORD_RESET = env_str("FACADE_RATE_PASSWORD_RESET", "3/3600")
FACADE_RATE_PASSWORD_RESET_IP = env_str("FACADE_RATE_PASSWORD_RESET_IP", "20/3600")
FACADE_EMAIL_CHANGE_HOURS = env_int("FACADE_EMAIL_CHANGE_HOURS", 24)
PASSWORD_RESET_TIMEOUT = env_int("PASSWORD_RESET_TIMEOUT", 3600)
