# The production image: one image for web, worker and beat (compose.yaml picks the command).
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    FACADE_VAR_DIR=/var/lib/facade DJANGO_SETTINGS_MODULE=facade.settings
WORKDIR /app
RUN useradd --system --home-dir /var/lib/facade --create-home facade
COPY pyproject.toml README.md manage.py ./
COPY facade ./facade
COPY ledger ./ledger
COPY knowledge ./knowledge
COPY rsi ./rsi
COPY approvals ./approvals
COPY audit ./audit
COPY guard ./guard
COPY templates ./templates
COPY static ./static
# Editable, so that BASE_DIR (templates/, static/) stays /app.
RUN pip install -e .
USER facade
EXPOSE 8000
HEALTHCHECK --interval=15s --timeout=5s --retries=5 \
    CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status == 200 else 1)"
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "facade.asgi:application"]
