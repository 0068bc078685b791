// Two helpers for the Tester's modules. Everything taken from a robots.txt,
// a header or the URL is written as text (textContent), never as markup.
"use strict";

export const $ = (id) => document.getElementById(id);

export function el(tag, text, cls) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (cls) node.className = cls;
  return node;
}
