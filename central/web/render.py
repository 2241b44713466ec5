"""Rendering: the Jinja2 environment (autoescape on, ``jinja2.ext.i18n`` with the gettext catalogs of
``portgate.i18n``), the page context (user, language, CSRF token) and the common error pages.

A template's ``_('key')`` (and ``gettext``/``ngettext``) resolves in the request's language: the
page context carries that language's ``gettext`` and ``ngettext``, which the extension's ``_``
calls (docs/i18n.md)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from zoneinfo import ZoneInfo

import jinja2
import markupsafe
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from central.web.i18n import LANGS, t
from portgate.i18n import translations
from central.web.security import csrf_token
from central.web.codewords import function_label, post_label
from central.web.event_texts import event_text
from central.web.service_texts import flag_label, localize
from portgate import l10n
from portgate.timeutil import as_utc

TEMPLATES = Path(__file__).resolve().parent / "templates"

env = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=jinja2.select_autoescape(["html"], default=True),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    extensions=["jinja2.ext.i18n"],
    auto_reload=False,  # templates are read once per process: no stat of each template file on every page
)
env.install_gettext_translations(translations("pt"), newstyle=True)  # pt-BR unless the page says otherwise


_JOINED = re.compile(r"[\w.]+(?:[-/][\w.]+)+")  # g-aurora, 2026-W11, V001/9300001/2026-03-15/01-07


def keep_ids_whole(text: object) -> markupsafe.Markup:
    """``text`` escaped, each id or date joined by ``-`` or ``/`` (``g-aurora``, ``2026-03-15``)
    in a ``<span class="nb">`` (app.css: no line break inside), so running text in a table cell
    wraps between words, never inside an id (issue 34 item 14). A Jinja filter: ``|nb``."""
    escaped = str(markupsafe.escape("" if text is None else text))
    return markupsafe.Markup(_JOINED.sub(lambda m: f'<span class="nb">{m.group(0)}</span>', escaped))


env.filters["nb"] = keep_ids_whole


def lang_of(request: Request) -> str:
    lang = request.session.get("lang") or request.app.state.web.settings.lang
    return lang if lang in LANGS else "pt"


#: ``when(value, with_date)``'s second argument -> a ``portgate.l10n.SHAPES`` shape
_WHEN_SHAPES = {False: "time", None: "time", True: "day_time", "year": "moment", "minute": "minute",
                "year_minute": "moment_minute", "day": "day"}


def local_time(tz: ZoneInfo, lang: str = "pt"):
    def fmt(value, with_date: bool | str = False) -> str:
        """``value`` (aware or UTC datetime) in the port's time and the page's language
        (``portgate.l10n.at``): ``19:05:00``; ``with_date`` true: ``14/04 19:05:00``; ``"year"``:
        ``14/04/2026 19:05:00`` (a history spanning years); ``"year_minute"`` without the seconds;
        ``"minute"``: ``19:05``; ``"day"``: the port's day ``14/04/2026``. English as Babel's ``en``
        (``Apr 14, 2026, 7:05:00 PM``). ``None`` is ``—``; a date is its day."""
        if value is None:
            return "—"
        if isinstance(value, dt.datetime):
            return l10n.at(as_utc(value), lang, tz, _WHEN_SHAPES[with_date])
        if isinstance(value, dt.date):
            return l10n.day(value, lang)
        return str(value)

    return fmt


def period_label(start: dt.datetime, tz: ZoneInfo, hours: int = 6, lang: str = "pt") -> str:
    """A period by its local hours and day, as the escala names it: ``19-01 15/03/2026`` (English
    ``19-01 Mar 15, 2026``; ``portgate.l10n.period``)."""
    return l10n.period(as_utc(start), lang, tz, hours)


def actor_label(lang: str, actor: str | None) -> str:
    """Who did a step as the ledger stores it (``web:demo``, ``inspector:F001``, ``cli:root``,
    ``worker:V017``) as a person reads it: a login as it is, an inspector's card, a command-line
    user or a worker named in the page's language (``fiscal F001``); ``""`` for none."""
    if not actor:
        return ""
    kind, sep, who = actor.partition(":")
    if not sep or kind == "web":
        return who if sep else actor
    msgid = f"actor.{kind}"
    said = t(lang, msgid)
    return said.format(who=who) if said != msgid else actor


def _age(seconds) -> str:
    if seconds is None:
        return "—"
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h"


def once_per_code(label):
    """``label(code)`` looked up once per code for one render: the live panel names a post and its
    function for each of its ~2,400 dispatches, a handful of codes (docs/performance.md)."""
    seen: dict[str, str] = {}

    def named(code) -> str:
        code = str(code)
        said = seen.get(code)
        if said is None:
            said = seen[code] = label(code)
        return said

    return named


def page(request: Request, template: str, status_code: int = 200, **context) -> HTMLResponse:
    """Render ``template`` with the page context; ``context`` adds the page's own values. The error
    page on a worker's path (``/w/...``) is the worker's (``worker_frame.worker_error``)."""
    if template == "error.html" and request.url.path.startswith("/w/"):
        from central.web.routes.worker_frame import worker_error  # lazy: worker_frame renders with env

        return worker_error(request, status_code, **context)
    web = request.app.state.web
    lang = lang_of(request)
    user = getattr(request.state, "user", None)
    html = env.get_template(template).render(
        request=request, user=user, lang=lang, csrf=csrf_token(request),
        gettext=lambda key: t(lang, key), ngettext=translations(lang).ngettext, when=local_time(web.tz, lang), age=_age, path=request.url.path,
        day_text=lambda d: l10n.day(d, lang), month_text=lambda m: l10n.month(m, lang),
        week_text=lambda w: l10n.week(w, lang),
        refusal=lambda text: localize(lang, str(text)), flag=lambda code: flag_label(lang, str(code)),
        function_name=once_per_code(lambda code: function_label(lang, code)), post_name=once_per_code(lambda code: post_label(lang, code)),
        flag_list=lambda codes: ", ".join(flag_label(lang, str(c)) for c in codes or ()),
        event_words=lambda parts: event_text(lang, parts),
        period=lambda start: period_label(start, web.tz, lang=lang), actor=lambda who: actor_label(lang, who),
        port_scope=getattr(request.state, "port_scope", ()), port_view=getattr(request.state, "ports", None),
        **context,
    )
    return HTMLResponse(html, status_code=status_code)


def forbidden(request: Request, user) -> HTMLResponse:
    request.state.user = user
    return page(request, "error.html", status_code=403, message_key="forbidden", detail="")


def bad_input(request: Request, message: str, status_code: int = 400) -> HTMLResponse:
    """The error page with ``message`` (a service's refusal, English) in the page's language
    (``central.web.service_texts``)."""
    return page(request, "error.html", status_code=status_code, message_key="error",
                detail=localize(lang_of(request), message))


def attachment_download(filename: str, data: bytes) -> Response:
    """A case attachment as a download (the office's and the worker's case pages, R7): the bytes as
    ``application/octet-stream`` under a file name kept to letters, digits and ``._-`` (``anexo``
    when nothing is left), so a stored name cannot inject a header or a path."""
    safe = "".join(ch for ch in filename if ch.isalnum() or ch in "._-") or "anexo"
    return Response(data, media_type="application/octet-stream",
                    headers={"Content-Disposition": f'attachment; filename="{safe}"'})
