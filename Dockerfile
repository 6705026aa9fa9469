# The production image: one image for web, worker and beat (compose.yaml picks the command).
# tests/test_image.py reads this file: every directory the app reads at run time must be copied
# to where BASE_DIR (/app) expects it, and every command and health check must exist.
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    FACADE_VAR_DIR=/var/lib/facade DJANGO_SETTINGS_MODULE=facade.settings
WORKDIR /app
RUN useradd --system --home-dir /var/lib/facade --create-home facade
COPY pyproject.toml constraints.txt README.md manage.py ./
# The Python packages (pyproject's packages.find); guard/ brings its corpus (guard/corpus/).
COPY facade ./facade
COPY ledger ./ledger
COPY knowledge ./knowledge
COPY rsi ./rsi
COPY approvals ./approvals
COPY audit ./audit
COPY guard ./guard
# What the settings read from BASE_DIR: TEMPLATES' DIRS, STATICFILES_DIRS and LOCALE_PATHS
# (the compiled Chinese catalogue, locale/zh_Hans/LC_MESSAGES/django.mo, is committed: the
# image needs no gettext).
COPY templates ./templates
COPY static ./static
COPY locale ./locale
# The export verifier the auditor console offers for download (audit/verification_web.py).
COPY tools/verify_export.py ./tools/verify_export.py
# Editable, so that BASE_DIR (templates/, static/, locale/) stays /app.
RUN pip install -c constraints.txt -e .
USER facade
EXPOSE 8000
# For the default command (web).  /healthz answers within FACADE_HEALTH_TIMEOUT (2 s) plus a
# little whatever its dependencies do, so 10 s means the web process itself is stuck.
HEALTHCHECK --interval=15s --timeout=12s --start-period=30s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=10).status == 200 else 1)"
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "facade.asgi:application"]
