// The robots.txt editor and lint's findings.
//
// The textarea lies over a copy of its lines (#editor-lines, hidden from
// assistive technology) that carries what the textarea cannot: each line's
// number, lint's severity of the line (the Tester has no classes of its
// own: finding.line_severities), the lines that decide the selected result
// and the line of the finding pointed at. The copy wraps exactly as the
// textarea does (same font, width and wrapping), and the textarea is as tall
// as the copy, so both scroll together inside #editor and a number stays
// beside its line, wrapped or not.
"use strict";

import { el } from "./dom.js";

export class Editor {
  constructor(area, copy, box) {
    this.area = area;
    this.copy = copy;
    this.box = box; // the scrolling frame
    this.severity = new Map(); // line -> "error" / "warning", from the last answer
    this.notes = new Set(); // lines whose effect the page explains (Crawl-delay, Sitemap...)
    this.lit = new Set(); // the lines that decide the selected result
    this.pointed = null; // the line of the finding pointed at
    area.addEventListener("input", () => this.render());
  }

  get value() {
    return this.area.value;
  }

  set value(text) {
    this.area.value = text;
    this.render();
  }

  // One row in the copy per line of the text, at once on every edit (the
  // severities follow when the server answers).
  render() {
    const texts = this.area.value.split("\n");
    const rows = this.copy.children;
    while (rows.length < texts.length) this.copy.append(el("div"));
    while (rows.length > texts.length) this.copy.lastChild.remove();
    texts.forEach((text, i) => {
      const row = rows[i];
      if (row.textContent !== text) row.textContent = text;
      this.mark(row, i + 1);
    });
  }

  mark(row, n) {
    const severity = this.severity.get(n);
    row.dataset.line = String(n);
    row.className = "ln" + (severity ? " " + severity : "") + (this.notes.has(n) ? " note" : "") +
      (this.lit.has(n) ? " decides" : "") +
      (this.pointed === n ? " pointed" : "");
  }

  remark() {
    Array.from(this.copy.children).forEach((row, i) => this.mark(row, i + 1));
  }

  setSeverities(lines) {
    this.severity = new Map(lines.filter((l) => l.severity).map((l) => [l.n, l.severity]));
    this.notes = new Set(lines.filter((l) => l.note).map((l) => l.n));
    this.remark();
  }

  // Light the lines that decide the selected result (none: nothing selected).
  light(numbers) {
    this.lit = new Set(numbers);
    this.pointed = null;
    this.remark();
  }

  point(n) {
    this.pointed = n;
    this.remark();
    this.reveal(n);
  }

  // Scroll the editor (never the page) so that line n is in view.
  reveal(n) {
    const row = n ? this.copy.children[n - 1] : null;
    if (!row) return;
    const frame = this.box.getBoundingClientRect();
    const line = row.getBoundingClientRect();
    if (line.top < frame.top || line.bottom > frame.bottom) {
      this.box.scrollTop += line.top - frame.top - Math.max(0, (frame.height - line.height) / 3);
    }
  }
}

// Lint's findings under the editor, each with its line, code, message and
// fix written out; a finding's line button scrolls the editor to it.
export function showFindings(answer, editor, list, summary) {
  editor.setSeverities(answer.lines);
  list.replaceChildren();
  summary.textContent = answer.linted ? answer.summary : "nothing to check: the file is empty";
  for (const line of answer.lines) {
    for (const f of line.findings) {
      const item = el("li", null, f.severity);
      item.dataset.line = String(line.n);
      item.dataset.code = f.code;
      const go = el("button", "line " + line.n, "goto");
      go.type = "button";
      go.addEventListener("click", () => editor.point(line.n));
      item.append(go, " ", el("span", f.severity, "severity"), " ", el("code", f.code), " ",
        el("span", f.message, "message"));
      if (f.hint) item.append(el("span", "Fix: " + f.hint, "hint"));
      list.append(item);
    }
  }
  list.hidden = list.children.length === 0;
}
