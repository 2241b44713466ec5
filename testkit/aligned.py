"""Numeric columns whose header is not aligned with them, measured in a real browser (issue 34
item 14): in every rendered table of the page, a column in which a body cell (``td``, one column
wide, not empty) is laid out right-aligned — ``getComputedStyle(...).textAlign`` ``right``, or
``end`` in a left-to-right page — must have a header cell right-aligned too.

The header of a column is the ``th`` over it in the table's last header row (the last row of its
``thead``; a table without ``thead``: its last leading row made only of ``th``), colspans counted.
Nested tables are tables of their own (``table.rows`` holds only the table's own rows).

    misaligned = misaligned_headers(page)  # [{"table": "table#held", "column": 4, "header": "Total", ...}]
"""

from __future__ import annotations

from typing import Any

_SCRIPT = r"""() => {
  const out = [];
  const align = (el) => {
    const style = getComputedStyle(el);
    const a = style.textAlign;
    if (a === 'end') return style.direction === 'rtl' ? 'left' : 'right';
    if (a === 'start') return style.direction === 'rtl' ? 'right' : 'left';
    return a;
  };
  const name = (table) => 'table' + (table.id ? '#' + table.id : (table.className ? '.' + table.className.split(' ')[0] : ''));
  for (const table of document.querySelectorAll('table')) {
    if (!table.getClientRects().length) continue;
    let head = table.tHead && table.tHead.rows.length ? table.tHead.rows[table.tHead.rows.length - 1] : null;
    if (!head) {
      for (const row of table.rows) {
        if (row.cells.length && [...row.cells].every(c => c.tagName === 'TH')) head = row; else break;
      }
    }
    if (!head) continue;
    const headers = [];
    for (const th of head.cells) for (let k = 0; k < th.colSpan; k++) headers.push(th);
    const right = new Map();
    for (const body of table.tBodies) {
      for (const row of body.rows) {
        if (row === head) continue;
        let col = 0;
        for (const cell of row.cells) {
          if (cell.tagName === 'TD' && cell.colSpan === 1 && cell.textContent.trim() && cell.getClientRects().length
              && align(cell) === 'right' && !right.has(col)) right.set(col, cell);
          col += cell.colSpan;
        }
      }
    }
    for (const [col, cell] of right) {
      const th = headers[col];
      if (!th || !th.textContent.trim() || align(th) === 'right') continue;
      out.push({table: name(table), column: col, header: th.textContent.trim().slice(0, 40),
                header_align: align(th), cell: cell.textContent.trim().slice(0, 40)});
    }
  }
  return out;
}"""


def misaligned_headers(page: Any) -> list[dict]:
    """The columns of ``page`` (a Playwright page) whose body cells are right-aligned under a header
    that is not: ``[{"table", "column", "header", "header_align", "cell"}]`` (``table``: ``table#id``
    or ``table.class``; ``column``: 0-based, colspans counted; ``cell``: the first right-aligned
    cell's text), in document order; ``[]`` when every such header is right-aligned."""
    return page.evaluate(_SCRIPT)
