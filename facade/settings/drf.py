"""Django REST framework and the OpenAPI schema."""

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "facade.tenancy.api.auth.PeerKeyAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # Views that need a signed-in user name IsAuthenticated (and Django's CSRF check covers
    # them); everything else — the customer endpoints — refuses cross-site writes.
    "DEFAULT_PERMISSION_CLASSES": ["facade.origins.CrossSiteWritesRefused"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "facade.api.BoundedJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "facade.api_schema.EdgeAutoSchema",
    "EXCEPTION_HANDLER": "facade.api.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Facade API",
    "DESCRIPTION": (
        "One facade agent per business, three faces (owner, customer, peer). The audience of a "
        "session is derived by the server; errors are JSON objects with a machine-readable "
        "`error` code and a human `detail`."
    ),
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
}
