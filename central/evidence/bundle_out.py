"""Where ``portgate evidence export`` writes its bundle: a new file, never one already there unless
``--force`` (a bundle handed to a labour court is not replaced silently: docs/evidence.md), nor a
file half written. The refusals (``BadInput``, English; ``central.web.service_codes_files``
``evidence_out_exists`` and ``output_unwritable`` word them in pt-BR) name the path as the user
gave it. Changes when how or where the bundle file is written changes."""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from portgate.errors import BadInput
from portgate.tables import one_line


def _exists(out: Path) -> BadInput:
    return BadInput(f"{str(out)!r} already exists: an evidence bundle is never replaced silently (give another "
                    "--out, or --force to replace it)", where="--out")


def _unwritable(out: Path, exc: OSError) -> BadInput:
    return BadInput(f"cannot write the output {one_line(str(out))!r}: {exc.strerror or type(exc).__name__}")


def check_request(registration: str, out: str | Path, force: bool) -> None:
    """Refuse, before the ledger is read, an empty or blank ``registration`` (it would read "no event
    or shift of  from ..."), an ``out`` that exists (unless ``force``) or whose directory does not
    exist (``BadInput``: the path as the user gave it, the system's reason in words)."""
    if not registration.strip():
        raise BadInput("the registration (--registration) is empty")
    out = Path(out)
    if out.exists() and not force:
        raise _exists(out)
    if not out.parent.is_dir():  # a file where the directory should be is not a missing directory
        code = errno.ENOTDIR if out.parent.exists() else errno.ENOENT
        raise _unwritable(out, OSError(code, os.strerror(code)))


def write_out(out: Path, data: bytes, force: bool) -> None:
    """Write ``data`` to ``out``, a new file: never over an existing one (a court's bundle is not
    replaced silently; ``open(..., "x")``, so a file made meanwhile is not replaced either) unless
    ``force``, which replaces it at once (a temporary file beside it, renamed over it). A failed
    write leaves no file behind. Raises ``BadInput`` (``_exists``, ``_unwritable``)."""
    made: Path | None = None
    try:
        if force:
            fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", dir=out.parent)
            made = Path(tmp)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(made, out)
        else:
            with out.open("xb") as fh:
                made = out
                fh.write(data)
        made = None
    except FileExistsError as exc:
        raise _exists(out) from exc
    except OSError as exc:
        raise _unwritable(out, exc) from exc
    finally:
        if made is not None:
            made.unlink(missing_ok=True)

