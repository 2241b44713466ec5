"""The gate's process reads only its own texts (``portgate.i18n.gate_words``: the decision's words,
the indicator's head words, its own failure texts), never the office's whole catalogs: parsing them
imported Babel and 1,500 texts, 4-5 MB of the gate's 60 MB peak RSS target (issue 32 item 4,
``bench/gate_decision.py``: 61.9 -> 56.8 MB at 50,000 workers and 1,000,000 journal events)."""

from __future__ import annotations

import json
import subprocess
import sys

from edge.display.said import text
from edge.indicator import render
from edge.loop_records import INTERNAL_EN, INTERNAL_PT
from edge.rules.messages import Said
from edge.rules.model import Decision, Outcome
from portgate.i18n import gettext


def test_the_gate_words_a_decision_without_reading_the_whole_catalogs() -> None:
    code = (
        "import json, sys\n"
        "import app.cli, edge.service, edge.loop, edge.indicator, edge.loop_records\n"
        "from edge.display.said import text\n"
        "from edge.rules.messages import Said\n"
        "from portgate import i18n\n"
        "said = Said(head='deny', reasons=(('G2.control', (('status', 'lost'),)),), actions=('retain',), rules=('G2',))\n"
        "words = [text(said, 'pt'), text(said, 'en')]\n"
        "print(json.dumps({'babel': sorted(m for m in sys.modules if m.split('.')[0] == 'babel'),"
        " 'full': [i18n._catalog.cache_info().currsize, i18n.translations.cache_info().currsize],"
        " 'words': words}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    found = json.loads(out.strip().splitlines()[-1])
    assert found["babel"] == [] and found["full"] == [0, 0], found
    said = Said(head="deny", reasons=(("G2.control", (("status", "lost"),)),), actions=("retain",), rules=("G2",))
    assert found["words"] == [text(said, "pt"), text(said, "en")]
    assert found["words"][0].startswith(gettext("pt", "gate.head.deny")) and found["words"][0].endswith("[G2]")
    assert found["words"][1].startswith(gettext("en", "gate.head.deny"))


def test_the_gate_texts_are_the_catalogs_texts() -> None:
    """The gate's part gives the same words as the whole catalogs (English falling back to pt-BR)."""
    assert (INTERNAL_PT, INTERNAL_EN) == (gettext("pt", "gate.internal.deny"), gettext("en", "gate.internal.deny"))
    shown = render(Decision(outcome=Outcome.ADMIT, rules_failed=(), message_pt="ok", message_en="ok"), "en")
    assert gettext("en", "indicator.admit") in shown
