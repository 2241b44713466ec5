"""Rendering: the Jinja2 environment (autoescape on), the page context (user, language, CSRF
token, translations) and the common error pages."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from zoneinfo import ZoneInfo

import jinja2
from starlette.requests import Request
from starlette.responses import HTMLResponse

from central.web.i18n import LANGS, t
from central.web.security import csrf_token

TEMPLATES = Path(__file__).resolve().parent / "templates"

env = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=jinja2.select_autoescape(["html"], default=True),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def lang_of(request: Request) -> str:
    lang = request.session.get("lang") or request.app.state.web.settings.lang
    return lang if lang in LANGS else "pt"


def _local_time(tz: ZoneInfo):
    def fmt(value, with_date: bool = False) -> str:
        if value is None:
            return "—"
        if isinstance(value, dt.datetime):
            if value.tzinfo is None:
                value = value.replace(tzinfo=dt.UTC)
            local = value.astimezone(tz)
            return local.strftime("%d/%m %H:%M:%S" if with_date else "%H:%M:%S")
        return str(value)

    return fmt


def _age(seconds) -> str:
    if seconds is None:
        return "—"
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"


def page(request: Request, template: str, status_code: int = 200, **context) -> HTMLResponse:
    """Render ``template`` with the page context; ``context`` adds the page's own values."""
    web = request.app.state.web
    lang = lang_of(request)
    user = getattr(request.state, "user", None)
    html = env.get_template(template).render(
        request=request, user=user, lang=lang, csrf=csrf_token(request),
        _=lambda key: t(lang, key), when=_local_time(web.tz), age=_age, path=request.url.path,
        **context,
    )
    return HTMLResponse(html, status_code=status_code)


def forbidden(request: Request, user) -> HTMLResponse:
    request.state.user = user
    return page(request, "error.html", status_code=403, message_key="forbidden", detail="")


def bad_input(request: Request, message: str, status_code: int = 400) -> HTMLResponse:
    return page(request, "error.html", status_code=status_code, message_key="error", detail=message)
