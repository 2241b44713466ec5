"""The office web application (``portgate office serve``): Starlette on uvicorn over the ledger.

``central.web.app.create_app`` builds it; ``central.web.cli`` is the ``portgate office`` group.
Pages are server-rendered Jinja2 with htmx and Server-Sent Events (vendored in ``static/vendor``).
Business rules stay in the central services (registry, calls, cases); views read and call them.
"""
