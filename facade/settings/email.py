"""Email: SMTP when EMAIL_HOST is set, otherwise every message is written to var/outbox/ (0700,
each file 0600: facade/outbox_mail.py)."""

from .base import VAR_DIR
from .env import env_bool, env_int, env_str

DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Facade <facade@localhost>")
EMAIL_HOST = env_str("EMAIL_HOST", "")
if EMAIL_HOST:
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_PORT = env_int("EMAIL_PORT", 25)
    EMAIL_HOST_USER = env_str("EMAIL_HOST_USER", "")
    EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD", "")
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
    EMAIL_USE_SSL = env_bool("EMAIL_USE_SSL", False)
    EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 10)
else:
    EMAIL_BACKEND = "facade.outbox_mail.PrivateFileBackend"  # folder 0700, files 0600
    EMAIL_FILE_PATH = str(VAR_DIR / "outbox")

# The demo's outbox page (/owner/<slug>/outbox): a signed-in owner reads the e-mails the file
# backend wrote to their address (an L3 decision's code among them).  Only when DEBUG or this
# flag is on, and only with the file backend; `make run` turns it on.
FACADE_DEMO_OUTBOX = env_bool("FACADE_DEMO_OUTBOX", False)
