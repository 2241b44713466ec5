"""A registration (matrícula) as a person writes it in a file or a form: one rule for the
registry import (``central.registry.import_checks``), the gate's card seed and every ``cards.csv``
(``portgate.records.Card.from_csv_row``) and the union inspectors' ``inspectors.csv``
(``central.broadcast.csv_source``). The reasons are English (``file:line: reason`` once placed);
``central.web.service_codes`` words them in pt-BR (``reg_formula``, ``reg_char``,
``reg_case_registered``, ``reg_case_line``)."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable

#: The first characters that make a spreadsheet read a cell as a formula (CSV injection, OWASP): a
#: worker's name (``csv_import.worker_problems``) or a new category starting with one is refused.
FORMULA_LEADS = ("=", "+", "-", "@", "\t", "\r")
#: A registration: letters and digits, with ``-``, ``.`` or ``/`` between them (``V017``, ``1001``,
#: ``PRV001``, an OGMO's ``123.456-7`` or ``12/3``). Every registration of the project's data, demos,
#: benchmarks and tests fits; a space, a control character or a formula lead does not.
REGISTRATION = re.compile(r"[0-9A-Za-z]+(?:[-./][0-9A-Za-z]+)*")


def registration_problem(registration: str) -> str | None:
    """The English reason ``registration`` is no registration, or ``None``: one starting with a
    formula character (``FORMULA_LEADS``: ``=HYPERLINK("x")``; a spreadsheet would run it), one
    holding a character ``REGISTRATION`` does not allow (a space, a control character, ``#``: the
    first such character is named). An empty one, or one holding NUL, is left to the caller's
    ``required`` and bounds checks."""
    if registration[:1] in FORMULA_LEADS:
        return (f"registration {registration!r} starts with {registration[:1]!r}: not a registration "
                f"(a spreadsheet would run it as a formula)")
    if registration and "\x00" not in registration and not REGISTRATION.fullmatch(registration):
        odd = next((c for c in registration if not (c.isascii() and c.isalnum())), registration[-1])
        return f"registration {registration!r} holds {odd!r}: a registration is letters and digits, with - . / between them"
    return None


def case_clashes(placed: Iterable[tuple[str, str]], registered: Collection[str]) -> list[str]:
    """The ``(where, registration)`` rows whose registration differs only in letter case from a
    ``registered`` one (a row restating one of them exactly passes) or from an earlier row's (a
    row repeating one exactly is the caller's ``repeats line``): ``file:line: reason`` each."""
    by_fold: dict[str, str] = {}
    for reg in registered:
        by_fold.setdefault(reg.casefold(), reg)
    errors, rows = [], {}
    for where, reg in placed:
        fold = reg.casefold()
        other = by_fold.get(fold)
        if other is not None and other != reg and reg not in registered:
            errors.append(f"{where}: registration {reg} differs only in letter case from the registered {other}")
        elif fold in rows and rows[fold][1] != reg:
            errors.append(f"{where}: registration {reg} differs only in letter case from "
                          f"{rows[fold][1]} at line {rows[fold][0].rsplit(':', 1)[1]}")
        rows.setdefault(fold, (where, reg))
    return errors
