// Helpers for the Tester's modules (and its one API call). Everything taken from a robots.txt,
// a header or the URL is written as text (textContent), never as markup.
"use strict";

export const $ = (id) => document.getElementById(id);

export function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}

/** Show ``text`` in the info box ``id`` ("bad", "warn" or "" for its look). */
export function info(id, text, kind) {
  const box = $(id);
  box.hidden = false;
  box.className = "info" + (kind ? " " + kind : "");
  box.textContent = text;
}

/** The page's token, which every API call carries (docs/tester.md, "Safety"). */
const TOKEN = document.querySelector('meta[name="tester-token"]').content;

/** One call of the Tester's API: its JSON answer, or an Error with its message. */
export async function call(method, path, body) {
  const init = { method, headers: { "X-Tester-Token": TOKEN } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const data = await response.json();
  if (!response.ok) throw new Error(data.error || "HTTP " + response.status);
  return data;
}
