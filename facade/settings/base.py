"""Settings every deployment shares.  Every variable read here is documented in README.md."""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url

from .env import env_bool, env_int, env_list, env_str, secret_from_file

BASE_DIR = Path(__file__).resolve().parents[2]
VAR_DIR = Path(env_str("FACADE_VAR_DIR", str(BASE_DIR / "var"))).resolve()
VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
# var/ holds the secret key, the ledger's signing key, the embedded database and the demo outbox
# (one-time codes): no other account on the machine may list or read it (issue 28 §5).
if VAR_DIR.stat().st_uid == os.getuid():
    VAR_DIR.chmod(0o700)

SECRET_KEY = env_str("SECRET_KEY", "") or secret_from_file(VAR_DIR / "secret_key")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "django_otp",
    "csp",
    "django_otp.plugins.otp_totp",
    "axes",
    "ledger",
    "facade.tenancy",
    "facade.dialogue",
    "facade.peers",
    "knowledge",
    "rsi",
    "approvals",
    "audit",
    "guard",
]

MIDDLEWARE = [
    # Outermost: whatever answers an /api/ path with an error, it leaves as JSON (facade/api.py).
    "facade.api.ApiErrorsInJson",
    "django.middleware.security.SecurityMiddleware",
    "facade.security.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Before anything that may read a body (the CSRF check reads form posts).
    "facade.bodylimit.BodyLimitMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django_otp.middleware.OTPMiddleware",
    "facade.accounts.middleware.TwoStepGate",
    # The language a signed-in person last read the site in, for e-mails to them.
    "facade.accounts.middleware.RememberLanguage",
    # A signed-in auditor changes nothing: every unsafe method refused (audit/readonly.py).
    "audit.readonly.AuditorReadOnly",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Turns a lock-out flagged during authenticate() into the sign-in page saying so.
    "axes.middleware.AxesMiddleware",
    # A deadlock or serialization failure a view met: 503 with Retry-After, never a 500.
    "facade.api.TransientConflictAnswer",
]

ROOT_URLCONF = "facade.urls"
ASGI_APPLICATION = "facade.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
                "facade.dependencies.context",
            ],
        },
    },
]

DATABASE_URL = env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'facade.sqlite3'}")
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 0))}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several processes (web, worker, beat) share the file: WAL lets readers run beside the
    # writer, IMMEDIATE takes the write lock at BEGIN so ledger appends serialise cleanly.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Knowledge search ranks a bounded candidate set; a query with very common words would still
    # make the GIN scan collect every match first.  This soft cap (a documented PostgreSQL
    # setting for exactly that) keeps such scans bounded as the knowledge base grows.
    DATABASES["default"].setdefault("OPTIONS", {})["options"] = "-c gin_fuzzy_search_limit=" + str(
        env_int("FACADE_GIN_SEARCH_LIMIT", 1000)
    )
    # Under ASGI every sync call may run on another thread and would open a new connection (a
    # new server process) each time; a pool hands out open ones instead.  DB_POOL is its size.
    # Each pooled connection is checked before it is handed out (one empty round trip): with
    # CONN_HEALTH_CHECKS, Django gives the pool psycopg-pool's `ConnectionPool.check_connection`
    # (it passes `check=` itself, so it cannot go in the pool's options).  After a restart of
    # PostgreSQL or terminated backends the pool then hands out no dead connection.
    _pool = env_int("DB_POOL", 0)
    if _pool > 0:
        if DATABASES["default"]["CONN_MAX_AGE"]:
            raise ValueError("DB_POOL and DB_CONN_MAX_AGE exclude each other: set one of them")
        DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
        DATABASES["default"]["OPTIONS"]["pool"] = {"min_size": 1, "max_size": _pool, "timeout": 10}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise serves from the finders; it only needs the dir
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

# Cookies: secure whenever we are not in DEBUG; HttpOnly where JavaScript has no business.
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
CSRF_FAILURE_VIEW = "facade.web.csrf_failure"  # the site's 403 page, not Django's technical one
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy, HSTS and the https redirect: facade/settings/security.py.

# The customer identity cookie is signed by the server and scoped to one tenant.
FACADE_CUSTOMER_COOKIE_AGE = env_int("FACADE_CUSTOMER_COOKIE_AGE", 60 * 60 * 24 * 365)

# /healthz waits at most this many seconds for each dependency (all are checked at once); one
# that has not answered by then is reported down (facade/health.py).
FACADE_HEALTH_TIMEOUT = max(1, env_int("FACADE_HEALTH_TIMEOUT", 2))

# A topic made from customers' words reaches the owner's Unanswered questions page only once this
# many distinct customers (or peers) asked it (k-anonymity; 1 shows every topic).
FACADE_UNANSWERED_MIN_ASKERS = max(1, env_int("FACADE_UNANSWERED_MIN_ASKERS", 3))

# The daily review sends at most this many proposals a day to an agent's inbox (ranked by the
# sessions they concern; the rest are held back and counted).  A tenant's own
# `review_proposals_per_day`, when it has one, wins.
FACADE_REVIEW_PROPOSALS_PER_DAY = max(0, env_int("FACADE_REVIEW_PROPOSALS_PER_DAY", 5))

# The escalation budget (a token bucket per agent): each proposal its daily review sends to the
# owner's inbox takes a token; tokens come back at this many a day, up to the capacity.  A review
# that finds none left pauses the agent's proposing until the owner has cleared the inbox.
FACADE_REVIEW_ESCALATION_CAPACITY = max(0, env_int("FACADE_REVIEW_ESCALATION_CAPACITY", 15))
FACADE_REVIEW_ESCALATION_REFILL_PER_DAY = max(0, env_int("FACADE_REVIEW_ESCALATION_REFILL_PER_DAY", 5))

# The owner's preferences: the review reads the decisions of its proposals over this many days; a
# kind rejected at least FACADE_PREFERENCE_MIN_NET_REJECTIONS times more often than approved needs
# FACADE_PREFERENCE_SESSIONS_PER_REJECTION sessions affected per net rejection to be proposed.
FACADE_PREFERENCE_WINDOW_DAYS = max(1, env_int("FACADE_PREFERENCE_WINDOW_DAYS", 30))
FACADE_PREFERENCE_MIN_NET_REJECTIONS = max(1, env_int("FACADE_PREFERENCE_MIN_NET_REJECTIONS", 2))
FACADE_PREFERENCE_SESSIONS_PER_REJECTION = max(1, env_int("FACADE_PREFERENCE_SESSIONS_PER_REJECTION", 5))

# The ledger's signing key lives outside the database: from the environment, or generated once
# into var/.  Checkpoints are written outside the database as well.
FACADE_LEDGER_SIGNING_KEY = env_str("FACADE_LEDGER_SIGNING_KEY", "")
FACADE_LEDGER_SIGNING_KEY_FILE = VAR_DIR / "ledger_signing_key"
FACADE_LEDGER_CHECKPOINT_DIR = Path(
    env_str("FACADE_LEDGER_CHECKPOINT_DIR", str(VAR_DIR / "ledger-checkpoints"))
).resolve()
# The ledger depends on nothing else in the project; it learns which chains exist and who may
# read one from this class (a ledger.chains.ChainDirectory): one chain per tenant.
FACADE_LEDGER_CHAINS = "facade.tenancy.ledger_chains.TenantChains"

FACADE_PUBLIC_URL = env_str("FACADE_PUBLIC_URL", "http://127.0.0.1:8000")
