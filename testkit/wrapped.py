"""Words broken across lines, measured in a real browser (issue 34 item 14): in every table cell
and button of the page, each word — a run of non-blank characters, an amount ``R$ 1.234,56`` taken
as one — is laid out on one line, or it is reported.

How: for each visible text node under ``td``, ``th``, ``button`` (and ``a.button``), a DOM ``Range``
over each word; the word is broken when its ``Range.getClientRects()`` boxes sit on more than one
line (their tops differ by more than half a line). Text in a closed ``<details>`` or otherwise not
rendered has no boxes and is skipped; every ``<details>`` is opened first (what a click shows is
measured too).

    broken = wrapped_words(page)    # [{"word": "Matrí…cula", "where": "table#held th", "text": ...}]
"""

from __future__ import annotations

from typing import Any

SELECTOR = "td, th, button, a.button, [role=button]"

_SCRIPT = r"""(selector) => {
  const word = /-?R\$\s\d[\d.,]*|\S+/g;
  const out = [];
  const where = (el) => {
    const table = el.closest('table');
    const tag = el.tagName.toLowerCase();
    return (table ? 'table' + (table.id ? '#' + table.id : (table.className ? '.' + table.className.split(' ')[0] : '')) + ' ' : '') + tag;
  };
  for (const d of document.querySelectorAll('details:not([open])')) d.open = true;  // what a click shows
  for (const box of document.querySelectorAll(selector)) {
    if (box.parentElement && box.parentElement.closest(selector)) continue;  // measured with its outer box
    if (!box.getClientRects().length) continue;
    const walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || !parent.checkVisibility({visibilityProperty: true})) continue;
      const text = node.textContent;
      word.lastIndex = 0;
      for (let m = word.exec(text); m; m = word.exec(text)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const rects = [...range.getClientRects()].filter(r => r.width > 0 && r.height > 0);
        if (rects.length < 2) continue;
        const tops = rects.map(r => r.top);
        const line = Math.min(...rects.map(r => r.height));
        if (Math.max(...tops) - Math.min(...tops) > line / 2) {
          out.push({word: m[0], where: where(box), text: box.textContent.trim().slice(0, 80)});
        }
      }
    }
  }
  return out;
}"""


def wrapped_words(page: Any, selector: str = SELECTOR) -> list[dict]:
    """The words of ``page`` (a Playwright page) broken across lines inside ``selector``'s boxes:
    ``[{"word", "where", "text"}]`` (``where``: the table's id or class and the cell's tag;
    ``text``: the start of the box's text), in document order; ``[]`` when none is broken."""
    return page.evaluate(_SCRIPT, selector)
