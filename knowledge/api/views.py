"""Thin HTTP views for knowledge: ingest, search, history, restore and quarantine."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from pydantic import ValidationError
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facade.api import BoundedJSONParser, error_response
from facade.bodylimit import KiB
from facade.errors import ApplicationError
from facade.gate import Gate
from facade.tenancy.api.audience import refuse_over_limit, request_audience
from facade.tenancy.models import AgentProfile
from facade.tenancy.policy import AgentPolicy, NotFound
from facade.tenancy.schemas import Actor

from ..extract import MAX_BYTES as MAX_UPLOAD
from ..extract import extract, extract_text, precheck
from ..ingest import ingest_material
from ..jobs import ingest_job_create, ingest_job_status
from ..limits import ingest_limits, ingest_max_bytes, upload_limits
from ..models import EntryVersion, IngestJob, Kind, KnowledgeEntry, SourceType, Status
from ..schemas import SERVER_ONLY_SOURCE_TYPES, RestoreIn, SourceIn
from ..selectors import knowledge_search
from ..services import (
    KnowledgeError,
    entry_restore,
    knowledge_quarantine,
    knowledge_unquarantine,
    regulated_term_add,
)


class SourceSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=[c for c in SourceType.choices if c[0] not in SERVER_ONLY_SOURCE_TYPES])
    ref = serializers.CharField(max_length=300)
    version = serializers.CharField(max_length=128, required=False)


TEXT_MAX_CHARS = 1_000_000
# Multipart framing (boundaries, part headers) around a file of the largest size taken.
UPLOAD_BODY_LIMIT = MAX_UPLOAD + 64 * KiB


class TextIngestIn(serializers.Serializer):
    title = serializers.CharField(max_length=200)
    text = serializers.CharField(max_length=TEXT_MAX_CHARS, trim_whitespace=False)
    source = SourceSerializer(required=False)  # type: ignore[assignment]  # a field named like Field.source
    kind = serializers.ChoiceField(choices=Kind.choices, required=False, default=Kind.FACT)
    confidence = serializers.DecimalField(max_digits=4, decimal_places=3, min_value=0, max_value=1, required=False)


class VersionOut(serializers.Serializer):
    entry_id = serializers.IntegerField(source="entry.id")
    version = serializers.IntegerField(source="number")
    version_id = serializers.IntegerField(source="id")
    status = serializers.CharField()
    title = serializers.CharField()
    questions = serializers.ListField(child=serializers.CharField())
    reasons = serializers.ListField(source="decision_reasons", child=serializers.CharField())
    confidence = serializers.DecimalField(max_digits=4, decimal_places=3)
    regulated = serializers.BooleanField()
    source = serializers.SerializerMethodField()  # type: ignore[assignment]
    valid_from = serializers.DateTimeField(allow_null=True)
    valid_until = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()

    def get_source(self, version: EntryVersion) -> dict[str, str]:
        return {"type": version.source_type, "ref": version.source_ref, "version": version.source_version}


_OWNER_ERRORS = {
    401: error_response("`not_authenticated`"),
    403: error_response("`forbidden` (CSRF)"),
    404: error_response("`not_found`: no such agent among those you own"),
}


def _owned(request: Request, slug: str) -> AgentProfile:
    return AgentPolicy.get_owned(request.user, slug)


@extend_schema(tags=["knowledge"])
class IngestView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [BoundedJSONParser, MultiPartParser]
    # JSON: the longest text taken, every character escaped (6 bytes), and its fields.
    max_body_bytes = 6 * TEXT_MAX_CHARS + 64 * KiB
    max_upload_bytes = UPLOAD_BODY_LIMIT

    @extend_schema(
        summary="Ingest material: a file (multipart field `file`) or JSON text",
        description=(
            "Text, Markdown, HTML, PDF or DOCX. Documents are split along headings (else paragraph "
            "windows); each section becomes an entry whose source reference is `<document>#<anchor>` "
            "and whose source version is the file's SHA-256. Re-ingesting an unchanged file creates "
            "nothing. Nothing is kept when any part fails."
        ),
        request={
            "application/json": TextIngestIn,
            "multipart/form-data": inline_serializer(name="FileIngest", fields={"file": serializers.FileField()}),
        },
        responses={
            201: inline_serializer(
                name="IngestResult",
                fields={
                    "document": serializers.CharField(),
                    "sha256": serializers.CharField(),
                    "created": VersionOut(many=True),
                    "unchanged": serializers.IntegerField(),
                },
            ),
            400: error_response("`source_required`, `invalid_input`, `malformed_body`"),
            413: error_response(
                "`too_large`: over `FACADE_INGEST_MAX_BYTES` (the detail names the upload endpoint); "
                "`body_too_large` (the request)"
            ),
            415: error_response("`unsupported_type`"),
            422: error_response(
                "`no_content`, `pdf_encrypted`, `corrupt_file`, `archive_too_large`, `too_many_sections` (over "
                "`FACADE_INGEST_MAX_SECTIONS`; the detail names the limit and the upload endpoint), "
                "`too_many_characters`"
            ),
            **_OWNER_ERRORS,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        agent = _owned(request, slug)
        actor = Actor.human(request.user.pk)
        # Extracted here and stored in one transaction, so only small documents: the limits'
        # refusals name the upload endpoint, where a worker takes larger ones in batches.
        limits = ingest_limits(reverse("knowledge-uploads", kwargs={"slug": agent.slug}))
        max_bytes = ingest_max_bytes()
        upload = request.FILES.get("file") if hasattr(request, "FILES") else None
        if upload is not None:
            data = upload.read(max_bytes + 1)
            extracted = extract(
                upload.name or "upload", data, declared_type=upload.content_type, max_bytes=max_bytes, limits=limits
            )
            outcome = ingest_material(agent=agent, extracted=extracted, document=upload.name or "upload", actor=actor)
        else:
            if "source" not in request.data:
                raise KnowledgeError("source_required", 'JSON material needs a source: {"type", "ref"}')
            payload = TextIngestIn(data=request.data)
            payload.is_valid(raise_exception=True)
            values: dict[str, Any] = payload.validated_data
            extracted = extract_text(values["title"], values["text"], max_bytes=max_bytes, limits=limits)
            source = values["source"]
            outcome = ingest_material(
                agent=agent,
                extracted=extracted,
                document=f"{source['ref']}",
                actor=actor,
                source_type=source["type"],
                kind=values["kind"],
                confidence=values.get("confidence"),
            )
        body = {
            "document": outcome.document,
            "sha256": outcome.sha256,
            "created": VersionOut(outcome.created, many=True).data,
            "unchanged": outcome.unchanged,
        }
        return Response(body, status=status.HTTP_201_CREATED)


class SearchResultOut(serializers.Serializer):
    entry_id = serializers.IntegerField()
    version = serializers.IntegerField()
    title = serializers.CharField()
    snippet = serializers.CharField()
    status = serializers.CharField()
    source = serializers.DictField(child=serializers.CharField())  # type: ignore[assignment]


@extend_schema(
    tags=["knowledge"],
    summary="Search the agent's knowledge for the caller's audience",
    description=(
        "Customers and peers get approved knowledge that is valid now; owners also see pending "
        "versions. A search writes nothing: knowledge misses are recorded only by a conversation's "
        "run."
    ),
    parameters=[
        OpenApiParameter(
            "q",
            # The server refuses a query that is only spaces (or has none) or is longer than 500;
            # anything else is read for its words (a NUL is no word and is not refused).
            {"type": "string", "minLength": 1, "maxLength": 500, "pattern": r"\S"},
            required=True,
            description="what to look for: 1 to 500 characters, not only spaces",
        ),
        OpenApiParameter("limit", int, description="1 to 50, default 5"),
    ],
    responses={
        200: inline_serializer(name="SearchResults", fields={"results": SearchResultOut(many=True)}),
        400: error_response("`invalid_input`: q is missing or limit is not a number"),
        401: error_response("`invalid_peer_key`"),
        404: error_response("`not_found`: no such agent"),
        429: error_response("`rate_limited` (with a Retry-After header)"),
        503: error_response("`server_busy`: too many opens and searches wait at once (with a Retry-After header)"),
    },
)
class SearchView(APIView):
    gate = Gate(frozenset({"GET"}), "search:ip", what="searches")

    def get(self, request: Request, slug: str) -> Response:
        agent = AgentPolicy.get_public(slug)
        audience, credential = request_audience(request, agent)
        query = request.query_params.get("q", "").strip()
        if not query or len(query) > 500:
            raise ApplicationError("invalid_input", "q is required and may have at most 500 characters")
        try:
            limit = int(request.query_params.get("limit", 5))
        except ValueError as exc:
            raise ApplicationError("invalid_input", "limit must be a number") from exc
        refuse_over_limit(request, agent, audience, credential, action="search")
        # A GET only reads: misses are counted from conversations (the runtime's search tool).
        results = knowledge_search(agent=agent, query=query, audience=audience, limit=limit)
        public = ("entry_id", "version", "title", "snippet", "status", "source")
        return Response({"results": [{name: getattr(r, name) for name in public} for r in results]})


@extend_schema(tags=["knowledge"])
class EntryListView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="List entries (latest version of each) with status and source filters",
        parameters=[
            OpenApiParameter("status", str, enum=[s.value for s in Status]),
            OpenApiParameter("source_type", str, enum=[s.value for s in SourceType]),
        ],
        responses={200: VersionOut(many=True), **_OWNER_ERRORS},
    )
    def get(self, request: Request, slug: str) -> Response:
        agent = _owned(request, slug)
        versions = EntryVersion.objects.filter(agent=agent).select_related("entry")
        if request.query_params.get("status"):
            versions = versions.filter(status=request.query_params["status"])
        if request.query_params.get("source_type"):
            versions = versions.filter(source_type=request.query_params["source_type"])
        latest: dict[int, EntryVersion] = {}
        for version in versions.order_by("entry_id", "-number"):
            latest.setdefault(version.entry_id, version)
        return Response(VersionOut(list(latest.values())[:500], many=True).data)


@extend_schema(tags=["knowledge"])
class EntryDetailView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="An entry's version history (newest first) with bodies",
        responses={
            200: inline_serializer(
                name="EntryHistory",
                fields={
                    "entry_id": serializers.IntegerField(),
                    "current_version": serializers.IntegerField(allow_null=True),
                    "versions": VersionOut(many=True),
                },
            ),
            **_OWNER_ERRORS,
        },
    )
    def get(self, request: Request, slug: str, entry_id: int) -> Response:
        agent = _owned(request, slug)
        entry = KnowledgeEntry.objects.filter(agent=agent, pk=entry_id).select_related("current_version").first()
        if entry is None:
            raise NotFound(str(entry_id))
        versions = list(entry.versions.order_by("-number").select_related("entry"))
        data = VersionOut(versions, many=True).data
        for item, version in zip(data, versions, strict=True):
            item["body"] = version.body
        return Response(
            {
                "entry_id": entry.pk,
                "current_version": entry.current_version.number if entry.current_version else None,
                "versions": data,
            }
        )


@extend_schema(tags=["knowledge"])
class RestoreView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="Restore an earlier version (as a new version)",
        request=inline_serializer(name="RestoreIn", fields={"version": serializers.IntegerField(min_value=1)}),
        responses={201: VersionOut, 409: error_response("`not_restorable`"), **_OWNER_ERRORS},
    )
    def post(self, request: Request, slug: str, entry_id: int) -> Response:
        agent = _owned(request, slug)
        entry = KnowledgeEntry.objects.filter(agent=agent, pk=entry_id).first()
        if entry is None:
            raise NotFound(str(entry_id))
        try:
            body = request.data if isinstance(request.data, dict) else {}  # a JSON array has no version
            payload = RestoreIn.model_validate({"version": body.get("version")})
        except ValidationError as exc:
            raise ApplicationError("invalid_input", "version must be a positive whole number") from exc
        restored = entry_restore(entry=entry, number=payload.version, actor=Actor.human(request.user.pk))
        return Response(VersionOut(restored).data, status=status.HTTP_201_CREATED)


class BatchIn(serializers.Serializer):
    source_type = serializers.ChoiceField(choices=SourceType.choices, required=False)
    source_ref = serializers.CharField(max_length=300, required=False)
    source_version = serializers.CharField(max_length=128, required=False)
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)


class _BatchView(APIView):
    permission_classes = [IsAuthenticated]
    release = False

    def post(self, request: Request, slug: str) -> Response:
        agent = _owned(request, slug)
        payload = BatchIn(data=request.data)
        payload.is_valid(raise_exception=True)
        action = knowledge_unquarantine if self.release else knowledge_quarantine
        count = action(agent=agent, actor=Actor.human(request.user.pk), **payload.validated_data)
        return Response({"versions": count})


_BATCH_DOC: dict[str, Any] = dict(
    request=BatchIn,
    responses={
        200: inline_serializer(name="BatchResult", fields={"versions": serializers.IntegerField()}),
        400: error_response("`invalid_input`: name a source or a time window"),
        **_OWNER_ERRORS,
    },
    tags=["knowledge"],
)


@extend_schema(summary="Quarantine versions by source, source version or time window", **_BATCH_DOC)
class QuarantineView(_BatchView):
    release = False


@extend_schema(summary="Release quarantined versions back to their status", **_BATCH_DOC)
class UnquarantineView(_BatchView):
    release = True


__all__ = [
    "IngestView",
    "SearchView",
    "EntryListView",
    "EntryDetailView",
    "RestoreView",
    "QuarantineView",
    "UnquarantineView",
    "Kind",
    "SourceIn",
]


class JobOut(serializers.Serializer):
    id = serializers.IntegerField()
    filename = serializers.CharField()
    state = serializers.ChoiceField(choices=["queued", "running", "done", "failed"])
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    created = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    error = serializers.DictField(allow_null=True)
    attempt = serializers.IntegerField(help_text="the run the job is at: 0 before the first starts, 2 on its retry")
    retry = serializers.BooleanField(
        help_text="the worker of the first run died: the job waits or runs again from the start (once); when the "
        "retry's worker dies too the job ends `failed` with the error `worker_lost`"
    )


@extend_schema(tags=["knowledge"])
class UploadView(APIView):
    permission_classes = [IsAuthenticated]
    parser_classes = [MultiPartParser]
    max_upload_bytes = UPLOAD_BODY_LIMIT

    @extend_schema(
        summary="Upload a document to be ingested by a worker (progress at /knowledge/jobs/<id>)",
        description=(
            "The file's size, type and structure are checked at once (bad input is refused here and "
            "nothing is queued); the worker extracts it within the upload limits (sections, characters, "
            "time, memory) and stores it in batches. A document over a limit fails its job with an "
            "error naming the limit (`too_many_sections`, `too_many_characters`, `extraction_timeout`, "
            "`extraction_out_of_memory`); `total` is 0 until the worker has read the file."
        ),
        request=inline_serializer(name="UploadIn", fields={"file": serializers.FileField()}),
        responses={
            202: JobOut,
            400: error_response("`invalid_input`: no file"),
            413: error_response("`too_large` (the file), `body_too_large` (the request)"),
            415: error_response("`unsupported_type`"),
            422: error_response(
                "`no_content`, `pdf_encrypted`, `corrupt_file`, `archive_too_large`, `too_many_sections` (a PDF "
                "with more pages than `FACADE_UPLOAD_MAX_SECTIONS`)"
            ),
            **_OWNER_ERRORS,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        agent = _owned(request, slug)
        upload = request.FILES.get("file")
        if upload is None:
            raise ApplicationError("invalid_input", "send the document in the multipart field `file`")
        name = upload.name or "upload"
        data = upload.read(MAX_UPLOAD + 1)
        media_type = precheck(name, data, declared_type=upload.content_type, limits=upload_limits())
        job = ingest_job_create(
            agent=agent, filename=name, media_type=media_type, data=data, actor=Actor.human(request.user.pk)
        )
        return Response(ingest_job_status(job), status=status.HTTP_202_ACCEPTED)


@extend_schema(tags=["knowledge"])
class JobView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="Progress of an upload being ingested", responses={200: JobOut, **_OWNER_ERRORS})
    def get(self, request: Request, slug: str, job_id: int) -> Response:
        agent = _owned(request, slug)
        job = IngestJob.objects.filter(agent=agent, pk=job_id).first()
        if job is None:
            raise NotFound(str(job_id))
        return Response(ingest_job_status(job))


class RegulatedTermIn(serializers.Serializer):
    term = serializers.CharField(max_length=100)
    category = serializers.CharField(max_length=32)


@extend_schema(tags=["knowledge"])
class RegulatedTermsView(APIView):
    """The owner's own terms that make material regulated (on top of the built-in law, tax,
    medical, finance and safety terms in English and Chinese)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="List the agent's own regulated terms", responses={200: RegulatedTermIn(many=True), **_OWNER_ERRORS}
    )
    def get(self, request: Request, slug: str) -> Response:
        agent = _owned(request, slug)
        return Response(RegulatedTermIn(agent.regulated_terms.order_by("term"), many=True).data)

    @extend_schema(
        summary="Add a regulated term (material mentioning it waits for the owner)",
        request=RegulatedTermIn,
        responses={201: RegulatedTermIn, 400: error_response("`invalid_input`"), **_OWNER_ERRORS},
    )
    def post(self, request: Request, slug: str) -> Response:
        agent = _owned(request, slug)
        payload = RegulatedTermIn(data=request.data)
        payload.is_valid(raise_exception=True)
        row = regulated_term_add(agent=agent, actor=Actor.human(request.user.pk), **payload.validated_data)
        return Response(RegulatedTermIn(row).data, status=status.HTTP_201_CREATED)
