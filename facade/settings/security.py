"""Response headers that keep a browser from being turned against the site.

The Content-Security-Policy allows scripts, styles, images and fonts from this origin only and no
inline script at all, so markup an attacker manages to slip into a page cannot run.  The chat's
WebSocket origin (ws:/wss: of the host being served) is added per response by
`facade.security.ContentSecurityPolicyMiddleware`, which knows the request's host.

HSTS and the redirect to https apply only behind a TLS-terminating proxy: the embedded default
serves plain http on loopback, where either would lock the browser out."""

from csp.constants import NONE, SELF

from .env import env_bool, env_int

CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    },
}

BEHIND_TLS_PROXY = env_bool("BEHIND_TLS_PROXY", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_TLS_PROXY else None
SECURE_SSL_REDIRECT = BEHIND_TLS_PROXY
# The container's health check calls /healthz over plain http from inside, past the proxy.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 60 * 60 * 24 * 365) if BEHIND_TLS_PROXY else 0
# Subdomains and preloading commit hosts this deployment may not control: opt in explicitly.
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
