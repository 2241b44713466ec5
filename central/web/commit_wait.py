"""A web write's commit, bounded: a primary of the replicated ledger in strict synchronous mode
holds a commit until a synchronous standby has it (issue 37 item 2: with 2 of 3 nodes down a login
waited over 120 s without an answer). The commit goes on in a thread of its own; the request
waits at most ``[web] commit_wait_s`` and then answers that the write is waiting for the ledger's
replicas and may still be saved (``CommitPending``, the 503 page of ``central.web.errors``). The
commit is never cancelled: a cancelled wait would leave a write visible on the primary that no
standby has."""

from __future__ import annotations

import threading

from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session


class CommitPending(Exception):
    """The commit was sent and the ledger had not answered after ``wait_s`` seconds; it goes on in
    the background and may still be saved. The caller answers so (the 503 page "waiting for the
    replicas, check before repeating"), never "nothing was written"."""

    def __init__(self, wait_s: float) -> None:
        super().__init__(f"the commit is still waiting for the ledger after {wait_s:g} s")
        self.wait_s = wait_s


def commit_within(session: Session, wait_s: float) -> None:
    """Commit ``session`` and close it, waiting at most ``wait_s`` seconds. Takes ownership of
    ``session`` (closed by this function or, for a late commit, by its thread). Raises
    ``CommitPending`` after ``wait_s``; a database error of the commit itself is raised with
    ``at_commit = True`` (its outcome unknown: the connection may have died after the server
    committed)."""
    done = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        try:
            session.commit()
        except DBAPIError as exc:
            exc.at_commit = True  # type: ignore[attr-defined]
            failure.append(exc)
        except BaseException as exc:  # handed to the request's thread below (or dropped once it left)
            failure.append(exc)
        finally:
            session.close()
            done.set()

    threading.Thread(target=run, name="web-commit", daemon=True).start()
    if not done.wait(wait_s):
        raise CommitPending(wait_s)
    if failure:
        raise failure[0]
