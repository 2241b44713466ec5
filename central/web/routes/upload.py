"""The CSV upload of workers, cards and ships files (the registry screens, ``/workers/upload``), all
or nothing: every bad row named ``file:line``, nothing written. On an office of several ports a
clerk's file registers and restates his ports' workers only (``central.web.registry_scope``).
Its routes are listed in ``central.web.routes.registry.ROUTES`` (before ``/workers/{registration}``)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.requests import Request

from central.calls import service as calls_service
from central.registry.store import import_files
from central.web.ports import per_port
from central.web.registry_scope import default_port, import_scope
from central.web.render import page
from central.web.security import guarded
from central.web.uploads import safe_name, saved
from portgate.errors import BadInput

WRITERS = ("office",)
UPLOAD_KINDS = ("workers", "cards", "ships")
SHIPS_ALL_PORTS = "ship calls are added by a user of every port"


@guarded(*WRITERS)
@per_port
async def upload_form(request: Request):
    return page(request, "upload.html", errors=[], done=None)


@guarded(*WRITERS)
@per_port  # a one-port clerk's file: his ports' workers (``registry_scope.import_scope``)
async def upload(request: Request):
    """Workers, cards and ships files in one transaction: any bad row, and nothing is written. A
    worker's port: his row's ``port`` cell (one of the user's ports), else the port the user's view
    shows (``registry_scope.default_port``), else his own (a new one: the home port)."""
    web = request.app.state.web
    form = await request.form()
    files: dict[str, tuple[str, bytes]] = {}
    for kind in UPLOAD_KINDS:
        up = form.get(kind)
        if isinstance(up, UploadFile) and up.filename:
            files[kind] = (safe_name(up.filename, f"{kind}.csv"), await up.read())
    typed = form.get("new_categories") if isinstance(form.get("new_categories"), str) else ""  # kept on refusal
    if not files:
        return page(request, "upload.html", status_code=400, errors=["choose at least one CSV file"], done=None,
                    new_categories=typed)
    actor = f"web:{request.state.user.login}"
    port, ports = default_port(request), import_scope(request)
    if "ships" in files and ports.scope is not None and not set(ports.scope) >= set(ports.served):
        # as the ships page: adding or changing ship calls stays with users of every port
        return page(request, "upload.html", status_code=403, errors=[SHIPS_ALL_PORTS], done=None, new_categories=typed)

    def work(s):
        with saved(files) as paths:
            errors: list[str] = []
            counts: dict[str, int] = {}
            if "workers" in paths or "cards" in paths:
                try:
                    counts.update(import_files(s, workers_csv=paths.get("workers"), cards_csv=paths.get("cards"),
                                               actor=actor, now=web.now(), port=port, ports=ports,
                                               new_categories=named_categories(typed)))
                except BadInput as exc:
                    errors += str(exc).splitlines()
            if "ships" in paths:
                try:
                    counts["ships"] = calls_service.import_csv(s, paths["ships"], actor=actor, now=web.now())
                except (BadInput, UnicodeDecodeError) as exc:
                    errors += str(exc).splitlines()
            if errors:
                raise _Refused(errors)
            return counts

    try:
        counts = await run_in_threadpool(web.with_session, work)
    except _Refused as exc:
        return page(request, "upload.html", status_code=400, errors=exc.errors, done=None,
                    new_categories=typed)
    return page(request, "upload.html", errors=[], done=counts)


def named_categories(value) -> tuple[str, ...]:
    """The form's ``new_categories`` field (the command's ``--new-category``, repeatable): the
    categories this upload may open besides the known and registered ones, separated by commas or
    line breaks, blanks dropped; ``()`` when empty or not text. The import reads and checks them
    (``central.registry.import_checks.new_category_names``: a comma can thus open no category on
    either side); any other category is a bad row (``import_checks.category_errors``), as on the
    command line."""
    if not isinstance(value, str):
        return ()
    return tuple(dict.fromkeys(n.strip() for n in value.replace("\n", ",").split(",") if n.strip()))


class _Refused(Exception):
    """Bad rows: the transaction is rolled back (nothing written) and every row is shown."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors
