// The versions of robots.txt the store keeps for an origin, and what changed
// between the current one and the one before for each crawler of the form
// (GET /api/versions; docs/versions.md, "In the Tester"). Every value is
// written as text: a version's rules come from the site.
"use strict";

import { $, call, el } from "./dom.js";

/** The URL whose versions are shown (null: none), for ``followAgents``. */
let shownUrl = null;

function utc(seconds) {
  return new Date(seconds * 1000).toISOString().replace(".000", "").replace("T", " ");
}

function versionRow(version) {
  const row = el("tr");
  row.dataset.digest = version.digest || "";
  row.dataset.current = String(version.current);
  const name = version.digest === null ? "none (" + version.status + ": no rules)" : version.digest;
  const cells = [
    version.current ? "current" : "earlier",
    name,
    String(version.status),
    version.bytes === null ? "-" : version.bytes + " bytes",
    utc(version.first_seen),
    utc(version.last_seen),
  ];
  for (const text of cells) row.append(el("td", text, text === name ? "digest" : ""));
  return row;
}

function ruleItems(rules, said) {
  return rules.map((item) => el("li", said + ": " + (item.added ? "" : "removed ") +
    (item.kind === "allow" ? "Allow: " : "Disallow: ") + item.pattern + " (line " + item.line + ")"));
}

function changeBlock(entry) {
  const block = el("div", null, "change");
  block.dataset.agent = entry.agent;
  const who = entry.tokens.join(" or ");
  const change = entry.change;
  if (change === null) {
    block.append(el("p", "For " + who + ": only one version kept, nothing to compare."));
    block.dataset.changed = "none";
    return block;
  }
  block.dataset.changed = String(change.changed);
  if (!change.changed) {
    block.append(el("p", "For " + who + ": nothing changed between the two latest versions " +
      "(they differ only in what other crawlers, or no crawler, are told)."));
    return block;
  }
  block.append(el("p", "For " + who + ", what changed: " + change.summary));
  const list = el("ul");
  list.append(...ruleItems(change.newly_disallowed, "newly disallowed"),
    ...ruleItems(change.newly_allowed, "newly allowed"));
  if (list.children.length) block.append(list);
  return block;
}

/** Show the versions of ``url``'s origin, and the change for each of ``agents``. */
export async function showVersions(url, agents) {
  const box = $("versions");
  box.replaceChildren();
  const query = "url=" + encodeURIComponent(url) +
    agents.map((agent) => "&agent=" + encodeURIComponent(agent)).join("");
  let got;
  try {
    got = await call("GET", "/api/versions?" + query);
  } catch (error) {
    box.hidden = false;
    shownUrl = null;
    box.append(el("p", "versions: " + error.message, "bad"));
    return null;
  }
  box.hidden = !got.kept;
  shownUrl = got.kept ? url : null;
  if (!got.kept) return got;
  box.append(el("h3", "Versions kept for " + got.origin + " (" + got.versions.length + ")"));
  const table = el("table");
  table.id = "versions-table";
  const head = el("tr");
  for (const name of ["", "Version (sha256 of the body)", "Status", "Size", "First seen (UTC)", "Last seen (UTC)"]) {
    const th = el("th", name);
    th.scope = "col";
    head.append(th);
  }
  table.append(el("thead"), el("tbody"));
  table.tHead.append(head);
  table.tBodies[0].append(...got.versions.map(versionRow));
  const frame = el("div", null, "table-frame");
  frame.append(table);
  box.append(frame, ...got.changes.map(changeBlock));
  box.dataset.shown = got.origin;
  return got;
}

/** Show the change again for the crawlers of the form as they are edited. */
export function followAgents(agentsOf) {
  let pending = null;
  $("agents").addEventListener("input", () => {
    if (shownUrl === null) return;
    clearTimeout(pending);
    pending = setTimeout(() => showVersions(shownUrl, agentsOf()), 300);
  });
}
