"""Thin HTTP views for observe: an agent's feed subscriptions and one day's digest (owners only;
an agent the caller does not own answers 404)."""

from __future__ import annotations

import datetime
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from facade.api import error_response
from facade.errors import ApplicationError
from facade.tenancy.policy import AgentPolicy
from facade.tenancy.schemas import Actor

from ..observe import feed_add
from ..observe_models import URL_MAX, Digest, FeedSubscription
from ..observe_rules import MAX_KEYWORD_CHARS, MAX_KEYWORDS

_OWNER_ERRORS = {
    401: error_response("`not_authenticated`"),
    403: error_response("`forbidden` (CSRF)"),
    404: error_response("`not_found`: no such agent among those you own"),
}


class FeedIn(serializers.Serializer):
    url = serializers.CharField(max_length=URL_MAX)
    keywords = serializers.ListField(
        child=serializers.CharField(max_length=MAX_KEYWORD_CHARS), max_length=MAX_KEYWORDS, required=False, default=list
    )
    enabled = serializers.BooleanField(required=False, default=True)


class FeedOut(serializers.ModelSerializer):
    class Meta:
        model = FeedSubscription
        fields = [
            "id",
            "url",
            "keywords",
            "enabled",
            "last_status",
            "last_error",
            "last_http_status",
            "last_fetched_at",
            "created_at",
        ]


class ItemOut(serializers.Serializer):
    id = serializers.IntegerField()
    feed_url = serializers.CharField()
    guid = serializers.CharField()
    link = serializers.CharField()
    title = serializers.CharField()
    summary = serializers.CharField()
    published = serializers.DateTimeField(allow_null=True)
    score = serializers.IntegerField()
    matched = serializers.ListField(child=serializers.CharField())
    proposal_id = serializers.CharField()


class DigestOut(serializers.Serializer):
    id = serializers.IntegerField()
    agent = serializers.CharField(source="agent.slug")
    day = serializers.DateField()
    runs = serializers.IntegerField()
    feeds_ok = serializers.IntegerField()
    feeds_failed = serializers.IntegerField()
    updated_at = serializers.DateTimeField()
    items = ItemOut(many=True, source="items.all")


@extend_schema(tags=["observe"])
class FeedListView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(summary="List the agent's feed subscriptions", responses={200: FeedOut(many=True), **_OWNER_ERRORS})
    def get(self, request: Request, slug: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        return Response(FeedOut(FeedSubscription.objects.filter(agent=agent), many=True).data)

    @extend_schema(
        summary="Subscribe the agent to a feed (http or https; its items only ever become candidates)",
        request=FeedIn,
        responses={
            201: FeedOut,
            400: error_response("`invalid_input`, `invalid_url`, `invalid_keywords`, `too_many_feeds`"),
            409: error_response("`duplicate_feed`"),
            **_OWNER_ERRORS,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        payload = FeedIn(data=request.data)
        payload.is_valid(raise_exception=True)
        data: dict[str, Any] = payload.validated_data
        feed = feed_add(
            agent=agent,
            url=data["url"],
            keywords=data["keywords"],
            enabled=data["enabled"],
            actor=Actor.human(request.user.pk),
        )
        return Response(FeedOut(feed).data, status=status.HTTP_201_CREATED)


@extend_schema(tags=["observe"])
class DigestView(APIView):
    permission_classes = [IsAuthenticated]

    @extend_schema(
        summary="One day's digest of candidate items (never effective; propose one on the feeds page)",
        responses={200: DigestOut, 400: error_response("`invalid_date`"), **_OWNER_ERRORS},
    )
    def get(self, request: Request, slug: str, day: str) -> Response:
        agent = AgentPolicy.get_owned(request.user, slug)
        try:
            date = datetime.date.fromisoformat(day)
        except ValueError as exc:
            raise ApplicationError("invalid_date", "the date is YYYY-MM-DD") from exc
        digest = Digest.objects.filter(agent=agent, day=date).select_related("agent").first()
        if digest is None:
            raise ApplicationError("not_found", "no digest for that day", 404)
        return Response(DigestOut(digest).data)
