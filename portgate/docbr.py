"""Brazilian identifiers a payroll needs, read from one cell and checked by their check digits:
CPF (Cadastro de Pessoas Físicas, 11 digits, two check digits mod 11), PIS/NIS/PASEP/NIT (11
digits, one check digit mod 11) and CNPJ (the paying entity, 14 characters: digits, or letters and
digits in the alphanumeric form of IN RFB 2.229/2024, two check digits). The check-digit arithmetic is
``validate-docbr``'s; this module adds the cell rules of ``portgate.cells``: blanks stripped, the
usual punctuation accepted (``529.982.247-25``, ``170.33259.50-4``, ``11.222.333/0001-81``),
exactly the document's length (no zero padding of a short number: a digit lost in typing is an
error, not another person's CPF), and a refusal that names the column and the value.

Values are returned as their bare digits (what the registry stores); ``masked_*`` print them.
"""

from __future__ import annotations

import re

from validate_docbr import CNPJ, CPF, PIS

from portgate.errors import BadInput
from portgate.tables import one_line

_CPF, _PIS, _CNPJ = CPF(), PIS(), CNPJ()
_PUNCT = re.compile(r"[.\-/\s]")


def _bare(value: str | None) -> str:
    return _PUNCT.sub("", (value or "").strip()).upper()


def _checked(value: str | None, field: str, *, length: int, shape: str, example: str, alnum: bool,
             valid, optional: bool) -> str | None:
    text = (value or "").strip()
    if not text:
        if optional:
            return None
        raise BadInput(f"{field} is required")
    bare = _bare(text)
    pattern = r"[A-Z0-9]{12}[0-9]{2}" if alnum else rf"[0-9]{{{length}}}"
    if not re.fullmatch(pattern, bare):
        raise BadInput(f"{field} {one_line(text)[:40]!r} is not {length} digits ({shape}, e.g. {example})")
    if len(set(bare)) == 1 or not valid(bare):
        raise BadInput(f"{field} {one_line(text)[:40]!r} fails its check digits (a digit mistyped?)")
    return bare


def cpf(value: str | None, field: str = "cpf", *, optional: bool = True) -> str | None:
    """A CPF cell as its 11 digits (``'529.982.247-25'`` -> ``'52998224725'``); an empty cell is
    ``None`` if ``optional``. ``BadInput`` naming ``field`` for another length or characters, a
    number of one repeated digit or wrong check digits (Receita Federal's mod-11 rule)."""
    return _checked(value, field, length=11, shape="000.000.000-00", example="529.982.247-25", alnum=False,
                    valid=_CPF.validate, optional=optional)


def pis(value: str | None, field: str = "pis", *, optional: bool = True) -> str | None:
    """A PIS/NIS/PASEP/NIT cell as its 11 digits (``170.33259.50-4``); ``BadInput`` as
    ``cpf`` (one check digit, weights 3 2 9 8 7 6 5 4 3 2, mod 11)."""
    return _checked(value, field, length=11, shape="000.00000.00-0", example="170.33259.50-4", alnum=False,
                    valid=_PIS.validate, optional=optional)


def cnpj(value: str | None, field: str = "cnpj", *, optional: bool = False) -> str | None:
    """A CNPJ as its 14 characters (digits, or the alphanumeric form: 12 letters or digits and
    two check digits); ``BadInput`` as ``cpf``."""
    return _checked(value, field, length=14, shape="00.000.000/0000-00", example="11.222.333/0001-81",
                    alnum=True, valid=_CNPJ.validate, optional=optional)


def masked_cpf(bare: str | None) -> str:
    """``'12345678909'`` -> ``'123.456.789-09'``; ``''`` for None."""
    return f"{bare[:3]}.{bare[3:6]}.{bare[6:9]}-{bare[9:]}" if bare else ""


def masked_pis(bare: str | None) -> str:
    """``'17033259504'`` -> ``'170.33259.50-4'``; ``''`` for None."""
    return f"{bare[:3]}.{bare[3:8]}.{bare[8:10]}-{bare[10:]}" if bare else ""


def masked_cnpj(bare: str | None) -> str:
    """``'11222333000181'`` -> ``'11.222.333/0001-81'``; ``''`` for None."""
    return f"{bare[:2]}.{bare[2:5]}.{bare[5:8]}/{bare[8:12]}-{bare[12:]}" if bare else ""


def cpf_digits(first9: str) -> str:
    """The 11-digit CPF whose first nine digits are ``first9`` (its two check digits computed):
    what the demo's fictitious workers are given. ``ValueError`` unless nine digits."""
    if not re.fullmatch(r"[0-9]{9}", first9):
        raise ValueError("nine digits")
    d = [int(c) for c in first9]
    for n in (10, 11):
        d.append((sum(x * w for x, w in zip(d, range(n, 1, -1))) * 10) % 11 % 10)
    return "".join(map(str, d))


def pis_digits(first10: str) -> str:
    """The 11-digit PIS/NIS whose first ten digits are ``first10`` (its check digit computed).
    ``ValueError`` unless ten digits."""
    if not re.fullmatch(r"[0-9]{10}", first10):
        raise ValueError("ten digits")
    total = sum(int(c) * w for c, w in zip(first10, (3, 2, 9, 8, 7, 6, 5, 4, 3, 2)))
    rest = 11 - total % 11
    return first10 + str(0 if rest >= 10 else rest)
