"""Limits on documents turned into knowledge: what one upload may cost the worker and the database."""

from .env import env_int

# An upload is extracted by the worker in a child process held to these limits; a document over
# any of them fails with an error naming the limit.
FACADE_UPLOAD_MAX_SECTIONS = env_int("FACADE_UPLOAD_MAX_SECTIONS", 5000)
FACADE_UPLOAD_MAX_CHARS = env_int("FACADE_UPLOAD_MAX_CHARS", 2_000_000)
FACADE_UPLOAD_MAX_SECONDS = env_int("FACADE_UPLOAD_MAX_SECONDS", 120)
FACADE_UPLOAD_MAX_MEMORY_MB = env_int("FACADE_UPLOAD_MAX_MEMORY_MB", 1024)
# Sections per transaction when the worker stores an upload, so the tenant's ledger chain (and,
# on SQLite, the whole database) is never held for long.
FACADE_UPLOAD_BATCH_SECTIONS = env_int("FACADE_UPLOAD_BATCH_SECTIONS", 50)
# The synchronous ingest works inside the request and one transaction: small documents only.
FACADE_INGEST_MAX_BYTES = env_int("FACADE_INGEST_MAX_BYTES", 256 * 1024)
FACADE_INGEST_MAX_SECTIONS = env_int("FACADE_INGEST_MAX_SECTIONS", 100)

# Pending change proposals (approvals app) expire after this many days.
FACADE_PROPOSAL_EXPIRY_DAYS = env_int("FACADE_PROPOSAL_EXPIRY_DAYS", 14)
