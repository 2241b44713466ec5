"""What every worker page (``central.web.routes.worker``, ``worker_cases``, ``worker_office``)
shares: rendering a ``worker/*.html`` template (``wpage``), the guard of a worker's page
(``worker_only``: session, role, CSRF, then a registration that is not cancelled, R4), the actor
of his changes (``worker:<login>``), a refusal in his language (``say``, ``refused``) and one
photo of a document checked (``checked_photo``: JPEG or PNG, at most ``PHOTO_MAX`` bytes and
``PHOTO_MAX_PIXELS`` pixels).
"""

from __future__ import annotations

import functools
import io
import re
import warnings

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from urllib.parse import urlsplit

from central.pay.payslip import brl
from central.web.render import local_time, env, lang_of
from central.web.security import csrf_token, guarded
from central.web.codewords import function_label, post_label
from central.web.service_texts import flag_label, localize
from central.web.users import MIN_PASSWORD, end_sessions_of
from central.web.workeraccounts import registration_of
from central.web.workertexts import word, pay_rule
from portgate import l10n
from portgate.errors import BadInput

PHOTO_MAX = 4 * 1024 * 1024  # one photo of a document with a defence, bytes (under [web] max_body_mb)
PHOTO_FORMATS = {"JPEG": "image/jpeg", "PNG": "image/png"}
# pixels of one photo of a document: a phone's camera takes 12-50 MP; more is not a photo to read
# (a 12000x12000 PNG of 420 KB would take 430 MB to decode); Pillow's own guard starts at 179 MP
PHOTO_MAX_PIXELS = 50_000_000


def wpage(request: Request, template: str, status_code: int = 200, **context) -> HTMLResponse:
    """Render a worker template (``worker/*.html``) with the worker pages' context."""
    web = request.app.state.web
    lang = lang_of(request)
    context.setdefault("reg", getattr(request.state, "registration", None))
    html = env.get_template(template).render(
        request=request, user=getattr(request.state, "user", None), lang=lang, csrf=csrf_token(request),
        gettext=lambda key: word(lang, key), when=local_time(web.tz, lang), day_text=lambda d: l10n.day(d, lang), path=request.url.path, brl=brl,
        flag=lambda code: flag_label(lang, str(code)), function_name=lambda code: function_label(lang, str(code)),
        post_name=lambda code: post_label(lang, str(code)), rule=lambda r, d: pay_rule(lang, r, d),
        fmt=lambda key, **kw: word(lang, key).format(**kw), **context)
    return HTMLResponse(html, status_code=status_code)


def worker_only(fn):
    """Wrap a worker page: ``guarded("worker")``, then the account's registration must be valid (not
    cancelled, R4): else its sessions end and 403. Sets ``request.state.registration``."""

    @functools.wraps(fn)
    async def inner(request: Request) -> Response:
        web = request.app.state.web
        user = request.state.user

        def check(s):
            reg = registration_of(s, user.id)
            if reg is None:
                end_sessions_of(s, user.id, web.now())
            return reg

        reg = await run_in_threadpool(web.with_session, check)
        if reg is None:
            request.session.pop("sid", None)
            return wpage(request, "worker/message.html", status_code=403, message=word(lang_of(request), "w_disabled"))
        request.state.registration = reg
        return await fn(request)

    return guarded("worker")(inner)


def worker_actor(request: Request) -> str:
    return f"worker:{request.state.user.login}"



def checked_photo(data: bytes, name: str) -> tuple[str, str, bytes]:
    """One photo of a document: at most ``PHOTO_MAX`` bytes and ``PHOTO_MAX_PIXELS`` pixels, a JPEG
    or PNG Pillow can read. ``BadInput`` otherwise (``where`` photo-size, photo-pixels, photo-kind)."""
    from PIL import Image, UnidentifiedImageError  # lazy: Pillow only when a photo is checked (the office's start-up)

    if len(data) > PHOTO_MAX:
        raise BadInput(f"attachment {name} is larger than {PHOTO_MAX // 1024 // 1024} MB", where="photo-size")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as img:
                kind, (width, height) = img.format, img.size
                if width * height <= PHOTO_MAX_PIXELS:
                    img.verify()
    except Image.DecompressionBombError as exc:  # over Pillow's own limit: its message names the pixels
        found = re.search(r"\((\d+) pixels\)", str(exc))
        raise _too_many_pixels(name, int(found.group(1)) if found else PHOTO_MAX_PIXELS + 1, "") from None
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        raise BadInput(f"attachment {name} is not a JPEG or PNG photo", where="photo-kind") from None
    if kind not in PHOTO_FORMATS:
        raise BadInput(f"attachment {name} is not a JPEG or PNG photo", where="photo-kind")
    if width * height > PHOTO_MAX_PIXELS:
        raise _too_many_pixels(name, width * height, f"{width}x{height}")
    return name, PHOTO_FORMATS[kind], data


def _too_many_pixels(name: str, pixels: int, dims: str) -> BadInput:
    """The refusal of a photo of ``pixels`` pixels (``dims`` "WxH" when known), megapixels named."""
    exc = BadInput(f"attachment {name} has {pixels / 1e6:.0f} megapixels {dims}".rstrip()
                   + f", more than {PHOTO_MAX_PIXELS // 1_000_000}", where="photo-pixels")
    exc.megapixels = f"{pixels / 1e6:.0f}"  # type: ignore[attr-defined]
    exc.dims = f" ({dims})" if dims else ""  # type: ignore[attr-defined]
    return exc


SAYS = {"code": "w_code_wrong", "locked": "login_locked", "--password": "w_password_short",
        "photo-size": "w_photo_size", "photo-kind": "w_photo_kind", "photo-pixels": "w_photo_pixels"}


def say(lang: str, exc: BadInput) -> str:
    """A refusal in ``lang``: this module's own words by the error's ``where``, else the office's
    translation of the service's message (``service_texts.localize``)."""
    key = SAYS.get(exc.where or "")
    if key:
        return word(lang, key).format(mb=PHOTO_MAX // (1024 * 1024), n=MIN_PASSWORD,
                                      mp=getattr(exc, "megapixels", ""), dims=getattr(exc, "dims", ""), max_mp=PHOTO_MAX_PIXELS // 1_000_000)
    return localize(lang, exc.reason)


def refused(request: Request, message: str, status_code: int = 400) -> HTMLResponse:
    return wpage(request, "worker/message.html", status_code=status_code,
                 message=localize(lang_of(request), message))


_PAGE_OF = re.compile(r"/w/(?:processos/\d+|cartao|ativar)")


def worker_error(request: Request, status_code: int, message_key: str, detail: str = "", **context) -> HTMLResponse:
    """An error page on a worker's path (``/w/...``: a 400, 403, 404, 413 ... ``render.page`` would
    give as the office's ``error.html``) in the worker's layout, with a link back to the page: the
    page the request came from (same-origin ``Referer`` under ``/w/``), else the page of the
    address (``/w/processos/N`` of its defence), else ``/w/``."""
    ref = urlsplit(request.headers.get("referer", ""))
    if ref.path.startswith("/w/") and ref.netloc in ("", request.url.netloc):
        back = ref.path
    else:
        found = _PAGE_OF.match(request.url.path)
        back = found.group(0) if found else "/w/"
    return wpage(request, "worker/error.html", status_code=status_code, message_key=message_key, detail=detail,
                 back=back, **context)
