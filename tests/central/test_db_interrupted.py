"""A database failure raised while an interrupt unwound (a rollback refused on a connection the
interrupt left mid-command) is the interrupt: ``central.db.store_failure`` raises it
(``portgate.interrupts.interrupt_in`` finds it in the chain), so the command ends as interrupted
(exit 130/143, "interrompido") instead of "saving statements failed", exit 2 (issue 32,
docs/performance.md, fourteenth pass)."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from central.db import store_failure
from portgate.errors import StoreError
from portgate.interrupts import Terminated, interrupt_in


def _refused_while(stop: BaseException | None) -> SQLAlchemyError:
    """The error SQLAlchemy raises for a rollback refused while ``stop`` unwound (as in the CI
    failure: SQLAlchemy's error caused by the driver's, whose context is the interrupt)."""
    driver = RuntimeError("sending query failed: another command is already in progress")
    try:
        try:
            if stop is not None:
                raise stop
            raise ValueError("no interrupt")
        except (KeyboardInterrupt, ValueError):
            try:
                raise driver
            except RuntimeError as orig:
                raise OperationalError("ROLLBACK", None, orig) from orig
    except SQLAlchemyError as exc:
        return exc


@pytest.mark.parametrize("stop", [KeyboardInterrupt(), Terminated()])
def test_a_failure_an_interrupt_caused_raises_the_interrupt(stop):
    exc = _refused_while(stop)
    assert interrupt_in(exc) is stop
    with pytest.raises(KeyboardInterrupt) as raised:
        store_failure("saving statements failed", exc, "run again")
    assert raised.value is stop  # Terminated stays Terminated: exit 143


def test_a_failure_without_an_interrupt_is_a_store_error():
    exc = _refused_while(None)
    assert interrupt_in(exc) is None and interrupt_in(None) is None
    failure = store_failure("saving statements failed", exc, "run again")
    assert isinstance(failure, StoreError) and "another command is already in progress" in str(failure)


def test_a_chain_with_a_cycle_ends():
    a, b = ValueError("a"), ValueError("b")
    a.__context__, b.__cause__ = b, a
    assert interrupt_in(a) is None
