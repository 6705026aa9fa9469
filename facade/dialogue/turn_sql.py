"""The statements a chat turn writes on PostgreSQL, one round trip each.

A turn is the product's hot path: its cost is mostly round trips and the ORM's work per
statement, not the work PostgreSQL does.  So on PostgreSQL the writes a turn makes at its start
and at its end are each one statement (data-modifying CTEs), run through one psycopg cursor per
connection with server-side binding and an explicit prepare, as the ledger's append is.  The
services in `services.py` own the transactions, the checks and the ledger events around them;
on other databases (SQLite, the embedded default) they make the same writes through the ORM.

Every column of the rows is given here, because Django's model defaults are not database
defaults: a new column on `Message`, `Run`, `Span` or `DailyUsage` must be added here too
(tests/test_turn_services.py compares these rows with what the ORM path writes).
"""

from __future__ import annotations

import threading
from typing import Any

import psycopg

# The session touched (its last activity; the row lock serialises its messages) — only while
# it is open and, for a customer session, on the contract version the turn read its terms from
# (`version`; after a publish the session's first turn finds it on another version, and
# services._message_store moves it on or ends it under its lock) — the
# principal's message, the run that answers it and the first model call's count against the
# tenant's daily budget.  Answers one row: whether the session was open (if not, nothing was
# written), the message's id (NULL when the session holds this client_message_id already: then
# no run and no count either) and whether the budget had room (the last parameter) for the count.
START = """
WITH s AS (
    UPDATE dialogue_dialoguesession SET last_activity_at = %(now)s
    WHERE id = %(session)s AND status = 'open'
      AND (audience <> 'customer' OR contract_version IS NOT DISTINCT FROM %(version)s::integer)
    RETURNING id
), m AS (
    INSERT INTO dialogue_message (session_id, role, text, client_message_id, reply_to_id, citations, stop_reason,
                                  metadata, created_at)
    SELECT s.id, 'principal', %(text)s, %(cid)s, NULL, '[]'::jsonb, '', '{}'::jsonb, %(now)s FROM s
    ON CONFLICT (session_id, client_message_id) WHERE NOT (client_message_id = '') DO NOTHING
    RETURNING id
), b AS (
    INSERT INTO dialogue_dailyusage (tenant_id, day, model_calls)
    SELECT %(tenant)s, %(day)s, 1 FROM m WHERE %(limit)s > 0
    ON CONFLICT (tenant_id, day) DO UPDATE SET model_calls = dialogue_dailyusage.model_calls + 1
    WHERE dialogue_dailyusage.model_calls < %(limit)s
    RETURNING 1
), r AS (
    INSERT INTO dialogue_run (id, tenant_id, session_id, message_id, status, stop_reason, needs_input, step_index,
                              llm_call_count, tool_call_count, prompt_tokens, completion_tokens, provider,
                              context_hash, contract_version, guard_category, started_at, finished_at)
    SELECT %(run)s, %(tenant)s, %(session)s, m.id, 'planning', '', false, 0, 0, 0, 0, 0, %(provider)s,
           %(context_hash)s, %(version)s::integer, '', %(now)s, NULL
    FROM m
    RETURNING message_id
)
SELECT EXISTS (SELECT 1 FROM s), (SELECT message_id FROM r), EXISTS (SELECT 1 FROM b)
"""

# One more model call of a run against the daily budget; a row back means it was counted.
COUNT = """
INSERT INTO dialogue_dailyusage (tenant_id, day, model_calls) SELECT %(tenant)s, %(day)s, 1 WHERE %(limit)s > 0
ON CONFLICT (tenant_id, day) DO UPDATE SET model_calls = dialogue_dailyusage.model_calls + 1
WHERE dialogue_dailyusage.model_calls < %(limit)s
RETURNING model_calls
"""

# The reply, the run's outcome and counters, and its spans (as parallel arrays).
FINISH = """
WITH reply AS (
    INSERT INTO dialogue_message (session_id, role, text, client_message_id, reply_to_id, citations, stop_reason,
                                  metadata, ruleset_hash, created_at)
    VALUES (%(session)s, 'agent', %(text)s, '', %(message)s, %(citations)s::jsonb, %(stop_reason)s,
            %(metadata)s::jsonb, %(ruleset_hash)s, %(now)s)
    RETURNING id
), run AS (
    UPDATE dialogue_run SET status = %(status)s, stop_reason = %(stop_reason)s, needs_input = %(needs_input)s,
        guard_category = %(guard_category)s, finished_at = %(now)s, step_index = %(step_index)s,
        llm_call_count = %(llm_call_count)s, tool_call_count = %(tool_call_count)s,
        prompt_tokens = %(prompt_tokens)s, completion_tokens = %(completion_tokens)s
    WHERE id = %(run)s
), spans AS (
    INSERT INTO dialogue_span (tenant_id, run_id, kind, name, outcome, started_at, duration_ms, prompt_tokens,
                               completion_tokens)
    SELECT %(tenant)s, %(run)s, s.kind, s.name, s.outcome, s.started_at, s.duration_ms, s.prompt_tokens,
           s.completion_tokens
    FROM unnest(%(kinds)s::text[], %(names)s::text[], %(outcomes)s::text[], %(starts)s::timestamptz[],
                %(durations)s::float8[], %(prompts)s::int[], %(completions)s::int[])
         AS s (kind, name, outcome, started_at, duration_ms, prompt_tokens, completion_tokens)
)
SELECT id FROM reply
"""

# The session's latest messages, newest first (read before a turn stores its message).
HISTORY = """
SELECT role, text FROM dialogue_message WHERE session_id = %(session)s ORDER BY id DESC LIMIT %(limit)s
"""

_held = threading.local()


def execute(connection: Any, sql: str, params: dict[str, Any]) -> tuple[Any, ...] | None:
    """Run one of the statements above on the Django connection's psycopg connection (inside
    the caller's transaction, if any) and return its first row."""
    return _cursor(connection, sql, params).fetchone()


def fetch(connection: Any, sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    """As `execute`, all rows."""
    return _cursor(connection, sql, params).fetchall()


def _cursor(connection: Any, sql: str, params: dict[str, Any]) -> psycopg.Cursor[Any]:
    """One server-binding cursor per connection, each statement prepared once."""
    connection.ensure_connection()
    raw = connection.connection
    held = getattr(_held, "cursor", None)
    if held is None or held[0] is not raw or held[1].closed:
        held = _held.cursor = (raw, psycopg.Cursor(raw))
    cursor: psycopg.Cursor[Any] = held[1]
    cursor.execute(sql, params, prepare=True)
    return cursor
