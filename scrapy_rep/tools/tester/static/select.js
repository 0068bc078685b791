// Selecting a result: click its row, or Tab to its button and press Enter or
// Space; Up and Down move between the results. The selected row is marked
// (and its button pressed), and the editor lights the lines that decide it:
// its rule's line and the lines that decide its purposes.
"use strict";

import { el } from "./dom.js";

export class Selection {
  constructor(body, editor) {
    this.body = body; // the results' tbody
    this.editor = editor;
    this.key = null; // the selected result's URL and crawler, kept across re-tests
    body.addEventListener("keydown", (event) => this.step(event));
  }

  // The verdict's cell: a button, so that the row is reached by Tab.
  verdictCell(row) {
    const cell = el("td", null, "verdict");
    const button = el("button", row.verdict, "pick");
    button.type = "button";
    button.setAttribute("aria-pressed", "false");
    button.setAttribute("aria-label", row.verdict + ": " + row.url + " for " + row.agent);
    cell.append(button);
    return cell;
  }

  // A row made: its cells labelled (narrow screens show each as "label: value").
  pickable(tr, deciding) {
    const heads = document.querySelectorAll("#results thead th");
    Array.from(tr.cells).forEach((td, i) => { td.dataset.label = heads[i].textContent; });
    tr.deciding = deciding;
    tr.addEventListener("click", () => {
      if (tr.classList.contains("selected")) this.clear();
      else this.select(tr, { reveal: true });
    });
  }

  // After a re-test: the same result selected again, without scrolling the
  // editor under the user's typing.
  restore() {
    const kept = Array.from(this.body.rows).find((tr) => keyOf(tr) === this.key);
    if (kept) this.select(kept, { reveal: false });
    else this.editor.light([]);
  }

  select(tr, how) {
    this.clear();
    tr.classList.add("selected");
    tr.querySelector("button.pick").setAttribute("aria-pressed", "true");
    this.key = keyOf(tr);
    this.editor.light(tr.deciding);
    if (how.reveal) this.editor.reveal(tr.deciding[0]);
    if (how.focus) tr.querySelector("button.pick").focus();
  }

  clear() {
    for (const tr of this.body.querySelectorAll("tr.selected")) {
      tr.classList.remove("selected");
      tr.querySelector("button.pick").setAttribute("aria-pressed", "false");
    }
    this.key = null;
    this.editor.light([]);
  }

  step(event) {
    const steps = { ArrowDown: 1, ArrowUp: -1 };
    if (!(event.key in steps) || !event.target.matches("button.pick")) return;
    const rows = Array.from(this.body.rows);
    const next = rows[rows.indexOf(event.target.closest("tr")) + steps[event.key]];
    event.preventDefault();
    if (next) this.select(next, { reveal: true, focus: true });
  }
}

function keyOf(tr) {
  return tr.dataset.url + "\n" + tr.dataset.agent;
}
