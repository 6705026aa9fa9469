"""The one place an HTTP request's audience towards an agent is derived (red line 1), and its
principal read."""

from __future__ import annotations

from http import HTTPStatus

from rest_framework.request import Request

from facade.errors import ApplicationError
from facade.ratelimit import anonymous_rate_check, rate_limited_error, request_client_ip

from ..identity import Principal, signed_customer_id
from ..models import AgentProfile, PeerCredential
from ..policy import AgentPolicy, is_platform_operator
from ..rules import Audience, CallerFacts, derive_audience


def request_audience(request: Request, agent: AgentProfile) -> tuple[Audience, PeerCredential | None]:
    """The audience the server gives this caller towards `agent`, from who is calling only: a
    valid key of this agent makes a peer (another agent's key is refused), an owner or a
    platform operator makes an owner, anyone else is a customer."""
    credential = request.auth if isinstance(request.auth, PeerCredential) else None
    if credential is not None and credential.agent_id != agent.pk:
        raise ApplicationError("invalid_peer_key", "this key belongs to another agent", HTTPStatus.UNAUTHORIZED)
    user = request.user
    facts = CallerFacts(
        has_valid_peer_key=credential is not None,
        is_authenticated=bool(user.is_authenticated),
        is_agent_owner=credential is None and AgentPolicy.is_owner(user, agent),
        is_platform_operator=credential is None and is_platform_operator(user),
    )
    return derive_audience(facts), credential


def request_principal(request: Request) -> Principal:
    """Who calls: the peer whose key authenticated the request (and nothing else), otherwise
    the signed-in user and the customer cookies the browser sent."""
    credential = request.auth if isinstance(request.auth, PeerCredential) else None
    return Principal.of(user=request.user, peer=credential, cookies=request.COOKIES)


def refuse_over_limit(
    request: Request, agent: AgentProfile, audience: Audience, credential: PeerCredential | None, *, action: str
) -> None:
    """Count a session open or a search (`action` "session" or "search") by a customer or a peer,
    and refuse it with 429 `rate_limited` over a limit.  A customer is counted by the customer id
    its cookie carries (none yet: by its address only) and by its address; a peer by its key
    alone, wherever it calls from, as for messages.  Owners of the agent are not counted.  Asked
    before anything is created, so a refusal writes nothing but the counters."""
    if audience == Audience.OWNER:
        return
    if credential is not None:
        limited = anonymous_rate_check(action, caller=str(credential.pk), ip=None)
    else:
        caller = signed_customer_id(request.COOKIES, agent.tenant_id)
        limited = anonymous_rate_check(action, caller=caller, ip=request_client_ip(request.META))
    if limited is not None:
        raise rate_limited_error(limited, "sessions opened" if action == "session" else "searches")
