"""The gettext catalogs' tooling (docs/i18n.md): extract the ``.pot``, check the ``.po`` files,
absorb texts still added to the old hand-kept tables.

    .venv/bin/python -m testkit.i18n extract   # portgate/locale/portgate.pot from the code (Babel, babel.cfg);
                                               # new msgids go into every .po with an empty msgstr
    .venv/bin/python -m testkit.i18n check     # every msgid translated in pt_BR and en, no unknown {field}
    .venv/bin/python -m testkit.i18n absorb    # move entries of the old tables (MESSAGES, WORDS, CODES'
                                               # pt-BR, FIELDS, FLAG_TEXTS, the screen's RULE_TITLES and
                                               # ACTIONS, ...) into the .po files and
                                               # take them out of the Python source; then extract
                                               # (a text the table changed wins, reported; or
                                               # --keep-catalog; --dry-run only reports)

The ``.pot`` holds what Babel extracts (``_("key")`` in the templates, ``t(lang, "key")``,
``word(lang, "key")``, ``_pt("key")``, ``N_("key")``, the command line's ``tr("key")`` in Python) and every msgid the ``.po`` files
already hold (msgids composed at run time, ``_('st_' ~ state)``, are not seen by an extractor).
"""

from __future__ import annotations

import ast
import functools
import datetime as dt
import importlib
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from babel.messages.catalog import Catalog
from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.pofile import read_po, write_po

from portgate.i18n import DOMAIN, LOCALE_DIR, LOCALES, po_path

ROOT = Path(__file__).resolve().parent.parent
BABEL_CFG = ROOT / "babel.cfg"
POT = LOCALE_DIR / f"{DOMAIN}.pot"
#: the call forms Babel extracts msgids from (the msgid's argument position)
KEYWORDS = {**DEFAULT_KEYWORDS, "t": (2,), "word": (2,), "_pt": None, "N_": None, "tr": None}
#: a fixed header date: a re-extraction with the same msgids writes the same file
_HEADER_DATE = dt.datetime(2026, 12, 6, tzinfo=dt.timezone.utc)
_WIDTH = 110
_FIELD = re.compile(r"(?<!\{)\{([A-Za-z_]\w*)?[^{}]*\}(?!\})")


def read_catalog(path: Path, locale: str | None = None) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, locale=locale, domain=DOMAIN)


def write_catalog(path: Path, catalog: Catalog) -> None:
    catalog.creation_date = _HEADER_DATE
    catalog.revision_date = _HEADER_DATE
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        write_po(f, catalog, width=_WIDTH, sort_output=True, include_lineno=False,
                 omit_header=False, no_location=not str(path).endswith(".pot"))


def new_catalog(locale: str | None) -> Catalog:
    return Catalog(locale=locale, domain=DOMAIN, project="portgate", version="0.1",
                   copyright_holder="portgate", charset="utf-8", fuzzy=False,
                   creation_date=_HEADER_DATE, revision_date=_HEADER_DATE)


@functools.cache
def extracted(root: Path = ROOT) -> dict[str, set[str]]:
    """msgid -> the files it is used in, as Babel extracts them over ``babel.cfg``."""
    with BABEL_CFG.open() as f:
        method_map, options_map = parse_mapping_cfg(f)
    found: dict[str, set[str]] = {}
    for filename, _lineno, message, _comments, _context in extract_from_dir(
            str(root), method_map, options_map, keywords=KEYWORDS, strip_comment_tags=True):
        msgid = message[0] if isinstance(message, tuple) else message
        if msgid:
            found.setdefault(msgid, set()).add(filename)
    return found


def extract() -> list[str]:
    """Write the ``.pot`` (extracted msgids and those the ``.po`` files hold) and add each new
    msgid to every ``.po`` untranslated; the msgids added."""
    used = extracted()
    kept = {m.id for loc in LOCALES.values() for m in read_catalog(po_path(loc), loc) if m.id}
    pot = new_catalog(None)
    for msgid in sorted(set(used) | kept):
        pot.add(msgid, locations=[(f, None) for f in sorted(used.get(msgid, ()))])
    write_catalog(POT, pot)
    added = []
    for loc in LOCALES.values():
        po = read_catalog(po_path(loc), loc)
        for msgid in sorted(set(used) - {m.id for m in po if m.id}):
            po.add(msgid, "")
            added.append(f"{loc}: {msgid}")
        write_catalog(po_path(loc), po)
    return added


def fields(text: str) -> set[str]:
    """The ``str.format`` fields of a text (``{date}``, ``{n}``; ``{{`` is a brace)."""
    return {m[1] or "" for m in _FIELD.finditer(text.replace("{{", "").replace("}}", ""))}


def check(pot_path: Path = POT, po_paths: dict[str, Path] | None = None,
          used: set[str] | None = None) -> list[str]:
    """Every problem of the catalogs, one line each (``[]``: none): a msgid of the ``.pot`` without
    a translation (or only a fuzzy one) in a ``.po``, a translation with a ``{field}`` pt-BR's
    text has not (the code gives pt-BR's fields), a msgid used in the code (``used``: Babel's extraction when ``None``) missing from the
    ``.pot``."""
    po_paths = po_paths or {loc: po_path(loc) for loc in LOCALES.values()}
    pot = read_catalog(pot_path)
    ids = {m.id for m in pot if m.id}
    used = set(extracted()) if used is None else used
    problems = [f"not in {pot_path.name} (run: python -m testkit.i18n extract): {msgid!r}"
                for msgid in sorted(used - ids)]
    catalogs = {loc: read_catalog(path, loc) for loc, path in po_paths.items()}
    for loc, po in catalogs.items():
        for msgid in sorted(ids):
            m = po.get(msgid)
            if m is None or not m.string:
                problems.append(f"{loc}: no translation for {msgid!r}")
            elif m.fuzzy:
                problems.append(f"{loc}: only a fuzzy translation for {msgid!r}")
    first = catalogs.get(LOCALES["pt"])
    for loc, po in catalogs.items():
        if first is None or po is first:
            continue
        for m in po:
            other = first.get(m.id) if m.id else None
            if m.id.startswith("svc."):  # a refusal's fields are its pattern's groups, all given
                continue
            if other is not None and m.string and other.string and fields(m.string) - fields(other.string):
                problems.append(f"{loc}: fields {sorted(fields(m.string) - fields(other.string))} of {m.id!r} "
                                f"are not in pt_BR's text (the code gives pt_BR's)")
    return problems


# --- absorb: the old tables' entries into the catalogs ------------------------------------------

def regex_text(pattern: str) -> str:
    """An English refusal pattern (``central.web.service_codes.CODES``) as the template it matches:
    ``r"no case (?P<id>\\S+)"`` -> ``"no case {id}"``."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("(?P<", i):  # a named group: its name, its body skipped
            name = pattern[i + 4:pattern.index(">", i)]
            depth, j = 0, i
            while True:
                if pattern[j] == "\\":
                    j += 2
                    continue
                depth += {"(": 1, ")": -1}.get(pattern[j], 0)
                j += 1
                if depth == 0:
                    break
            out.append("{" + name + "}")
            i = j
        elif pattern.startswith("(?P=", i):
            end = pattern.index(")", i)
            out.append("{" + pattern[i + 4:end] + "}")
            i = end + 1
        elif pattern.startswith("(?!", i) or pattern.startswith("(?=", i):
            i = pattern.index(")", i) + 1
        elif pattern.startswith("(?:", i):  # an alternative: its first branch
            end = pattern.index(")", i)
            out.append(pattern[i + 3:end].split("|")[0])
            i = end + 1
        elif c == "\\" and i + 1 < len(pattern):
            out.append(pattern[i + 1])
            i += 2
        elif c in "?":
            i += 1
        else:
            out.append(c)
            i += 1
    return _braces("".join(out))


def _braces(text: str) -> str:
    """Literal braces doubled for ``str.format``, the ``{name}`` fields kept."""
    parts = re.split(r"(\{[A-Za-z_]\w*\})", text)
    return "".join(p if re.fullmatch(r"\{[A-Za-z_]\w*\}", p) else p.replace("{", "{{").replace("}", "}}")
                   for p in parts)


def toml_key(pattern: str) -> str:
    """``r"Expected (?P<what>.+)"`` -> ``"toml.expected_what"``: a TOML reason's msgid."""
    words = re.findall(r"[a-z0-9]+", re.sub(r"\(\?P<(\w+)>[^)]*\)", r" \1 ", pattern).lower())
    return "toml." + "_".join(words)


@dataclass(frozen=True)
class Table:
    """An old hand-kept table: ``name`` in ``module``; ``texts(key, value)`` gives ``(msgid, pt,
    en)``; ``keep(key, value)`` the value's new source text, the index of the tuple element whose
    source stays, or ``None`` to take the entry out."""
    module: str
    name: str
    texts: Callable[[str, object], tuple[str, str, str] | None]
    keep: Callable[[str, object], str | int | None] = lambda key, value: None


def _pair(prefix: str) -> Callable[[str, object], tuple[str, str, str] | None]:
    return lambda key, value: (prefix + key, value[0], value[1]) if isinstance(value, tuple) else None


TABLES = (
    Table("central.web.i18n", "MESSAGES", _pair("")),
    Table("central.web.workertexts", "WORDS", _pair("")),
    Table("central.web.workertexts", "PAY_RULES", _pair("pay_rule.")),
    *(Table(module, name, lambda k, v: ("svc." + k, v[1], regex_text(v[0])) if isinstance(v, tuple) else None,
            keep=lambda k, v: 0)
      for module, name in (("central.web.service_codes", "CODES"), ("central.web.service_codes_files", "FILE_CODES"))),
    Table("central.web.service_texts", "FIELDS", lambda k, v: ("field." + k, v, k)),
    Table("central.web.service_texts", "FLAG_TEXTS",
          lambda k, v: ("flag." + k, v[0], v[1]) if isinstance(v, tuple) else None,
          keep=lambda k, v: 2),
    Table("central.web.service_texts", "ROLE_TEXTS", _pair("role.")),
    Table("central.web.service_texts", "TOML_REASONS",
          lambda k, v: (toml_key(k), v, regex_text(k)) if not str(v).startswith("toml.") else None,
          keep=lambda k, v: repr(toml_key(k))),
    # the parameters' and stored values' words of central.web.service_texts (pt-BR pages; English
    # pages show the stored word)
    *(Table("central.web.service_texts", name, lambda k, v, p=prefix: (p + k, v, k.replace("_", " ")))
      for name, prefix in (("_WORDS", "word."), ("_CASE_STATUS_PT", "case_status."),
                           ("_CASE_STEP_PT", "case_step."), ("_DECISION_PT", "decision."),
                           ("_STATE_PT", "state."), ("_KIND_PT", "card_kind."),
                           ("_CARD_EVENT_PT", "card_event."), ("_PENALTY_KIND_PT", "penalty_kind."),
                           ("_EVENT_TYPE_PT", "event_type."), ("_EVENT_DETAIL_PT", "event_detail."))),
    Table("edge.display.board", "RULE_TITLES", _pair("rule_title.")),
    Table("edge.display.board", "ACTIONS", _pair("screen_action.")),
    Table("edge.display.texts", "_PT", lambda k, v: ("screen." + k, v, "")),
    Table("edge.display.texts", "_EN", lambda k, v: ("screen." + k, "", v)),
)


def _dict_items(tree: ast.AST, name: str):
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        if isinstance(target, ast.Name) and target.id == name and isinstance(node.value, ast.Dict):
            yield from ((k, v) for k, v in zip(node.value.keys, node.value.values) if isinstance(k, ast.Constant))


def _rewrite(path: Path, name: str, changes: dict[str, str | int | None]) -> None:
    """Take the entries ``changes`` names out of the dict ``name`` (``None``) or give them a new
    value (source text, or the index of the tuple element whose source stays); the lines of other
    entries stay as they are."""
    data = path.read_bytes()  # ast's column offsets count UTF-8 bytes
    lines = data.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    at = lambda lineno, col: starts[lineno - 1] + col  # noqa: E731
    replaced = []
    for k, v in _dict_items(ast.parse(data), name):
        new = changes.get(k.value)
        if isinstance(new, int) and isinstance(v, ast.Tuple):
            part = v.elts[new]
            replaced.append((at(v.lineno, v.col_offset), at(v.end_lineno, v.end_col_offset),
                             data[at(part.lineno, part.col_offset):at(part.end_lineno, part.end_col_offset)]))
        elif isinstance(new, str):
            replaced.append((at(v.lineno, v.col_offset), at(v.end_lineno, v.end_col_offset), new.encode()))
    for a, b, new in sorted(replaced, reverse=True):
        data = data[:a] + new + data[b:]
    lines = data.splitlines(keepends=True)
    edits: dict[int, list[tuple[int, int]]] = {}  # line index -> (start, end) taken out
    for k, v in _dict_items(ast.parse(data), name):
        if k.value not in changes or changes[k.value] is not None:
            continue
        end_line, end = v.end_lineno - 1, v.end_col_offset  # the entry and its comma
        m = re.match(rb"\s*,[ \t]*", lines[end_line][end:])
        end += m.end() if m else 0
        for i in range(k.lineno - 1, end_line + 1):
            body = len(lines[i].rstrip(b"\r\n"))
            edits.setdefault(i, []).append((k.col_offset if i == k.lineno - 1 else 0, end if i == end_line else body))
    out = []
    for i, line in enumerate(lines):
        was_blank = not line.strip()
        for a, b in sorted(edits.get(i, ()), reverse=True):
            line = line[:a] + line[b:]
        if i in edits and not was_blank and not line.strip():
            continue  # a line only the taken-out entries were on
        out.append(line)
    path.write_bytes(b"".join(out))


def put_text(po: Catalog, msgid: str, text: str, keep_catalog: bool = False) -> list[str]:
    """Put an old table's ``text`` of ``msgid`` into ``po``: added when missing or untranslated;
    when the catalog has another text, the table's wins (a merged branch changed it) unless
    ``keep_catalog``. The lines saying what was done (none when the catalog has it already)."""
    loc = po.locale_identifier or "?"
    old = po.get(msgid)
    if old is not None and old.string == text:
        return []
    if old is not None and old.string and keep_catalog:
        return [f"{loc}: {msgid!r} kept {old.string!r}, the table said {text!r}"]
    said = [f"{loc}: {msgid!r} changed from {old.string!r}"] if old is not None and old.string else []
    if old is None:
        po.add(msgid, text)
    else:  # Catalog.add keeps an existing message's string
        old.string = text
        old.flags.discard("fuzzy")
    return said + [f"{loc}: {msgid!r} = {text!r}"]


def absorb(dry_run: bool = False, keep_catalog: bool = False) -> list[str]:
    """Move every entry of ``TABLES`` into the ``.po`` files and out of the source; then
    ``extract``. A msgid the catalogs already have takes the table's text when it differs (a
    merged branch changed it; reported), or keeps the catalog's with ``keep_catalog``. The lines
    of what was done."""
    done: list[str] = []
    rewrites: list[tuple[Path, str, dict[str, str | int | None]]] = []
    pos = {loc: read_catalog(po_path(loc), loc) for loc in LOCALES.values()}
    for table in TABLES:
        module = importlib.import_module(table.module)
        values = getattr(module, table.name, {})
        path = Path(module.__file__)
        changes: dict[str, str | int | None] = {}
        for key in [k.value for k, _v in _dict_items(ast.parse(path.read_bytes()), table.name)]:
            texts = table.texts(key, values[key])
            if texts is None:
                continue
            msgid, pt, en = texts
            for loc, text in ((LOCALES["pt"], pt), (LOCALES["en"], en)):
                if text:
                    done.extend(put_text(pos[loc], msgid, text, keep_catalog))
            changes[key] = table.keep(key, values[key])
        if changes:
            rewrites.append((path, table.name, changes))
    if not dry_run:  # the catalogs first: a source is never left without its texts
        for loc, po in pos.items():
            write_catalog(po_path(loc), po)
        for path, name, changes in rewrites:
            _rewrite(path, name, changes)
        extract()
    return done


def main(argv: list[str]) -> int:
    what = argv[1] if len(argv) > 1 else ""
    if what == "extract":
        for line in extract():
            print("new, untranslated:", line)
        return 0
    if what == "check":
        problems = check()
        print("\n".join(problems) or "catalogs complete")
        return 1 if problems else 0
    if what == "absorb":
        for line in absorb(dry_run="--dry-run" in argv, keep_catalog="--keep-catalog" in argv):
            print(line)
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
