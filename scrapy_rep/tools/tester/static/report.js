// The report page: every origin the crawl's store keeps, with its state now.
// Every row and count comes from the server (/api/report, the rows of
// `scrapy-rep report`); the page only shows them, as text (dom.js). The
// filters live in the page's URL: a link shows the same report (a read of
// the store) and never changes anything; Refetch happens only on the page's
// own buttons, after a question, with the run's token.
"use strict";

import { $, call, el } from "./dom.js";

const STATES = ["rules", "allow-all", "closed", "last-copy", "outage-allow"];
const FLAGS = ["expired", "cut", "redirected", "forbids-all", "lint-errors"];
const SORTS = ["origin", "state", "status", "checked", "since", "until", "age", "size", "failures"];
const MEANING = {
  "rules": "its rules decide",
  "allow-all": "a 4xx: everything allowed",
  "closed": "an outage: every request dropped",
  "last-copy": "an outage: the last good copy decides",
  "outage-allow": "an outage: everything allowed",
};
const page = { answer: null, loads: 0, pending: null };

function setStatus(text) {
  $("status").textContent = text;
}

// --- the filters, in the form and in the URL -----------------------------------

function checked(id) {
  return Array.from(document.querySelectorAll("#" + id + " input:checked")).map((i) => i.value);
}

function filters() {
  const chosen = { state: checked("states"), flag: checked("flags") };
  for (const name of ["host", "older", "newer"]) {
    const value = $(name).value.trim();
    if (value) chosen[name] = value;
  }
  if ($("deep").checked) chosen.deep = "1";
  return chosen;
}

function query() {
  const q = new URLSearchParams();
  const chosen = filters();
  for (const [name, value] of Object.entries(chosen)) {
    for (const item of [].concat(value)) q.append(name, item);
  }
  q.set("sort", $("sort").value);
  if ($("reverse").checked) q.set("reverse", "1");
  q.set("limit", $("limit").value);
  return q;
}

function boxes(id, values, chosen) {
  for (const value of values) {
    const box = el("input");
    box.type = "checkbox";
    box.value = value;
    box.checked = chosen.includes(value);
    const label = el("label", null, "check");
    label.append(box, document.createTextNode(" " + value));
    $(id).append(label);
  }
}

function fill(q) {
  const OUTAGE = ["closed", "last-copy", "outage-allow"]; // the command line's "outage"
  const states = q.getAll("state").flatMap((s) => s.split(","));
  boxes("states", STATES, states.flatMap((s) => (s === "outage" ? OUTAGE : [s])));
  boxes("flags", FLAGS, q.getAll("flag").flatMap((s) => s.split(",")));
  for (const name of ["host", "older", "newer"]) $(name).value = q.get(name) || "";
  for (const sort of SORTS) $("sort").append(el("option", sort));
  $("sort").value = SORTS.includes(q.get("sort")) ? q.get("sort") : "origin";
  $("reverse").checked = q.get("reverse") === "1";
  if (["50", "200", "1000"].includes(q.get("limit"))) $("limit").value = q.get("limit");
  $("deep").checked = q.get("deep") === "1";
}

// --- reading the store ------------------------------------------------------------

// Read the store with the form's filters; ``done``: what to say once shown.
async function load(done = "") {
  const q = query();
  history.replaceState(null, "", location.pathname + "?" + q.toString());
  setStatus("reading the store ...");
  document.body.dataset.state = "loading";
  try {
    const answer = await call("GET", "/api/report?" + q.toString());
    page.answer = answer;
    showCounts(answer);
    showRows(answer);
    setStatus(done);
    page.loads += 1;
    document.body.dataset.loads = String(page.loads);
    document.body.dataset.state = "ready";
  } catch (error) {
    setStatus("report failed: " + error.message);
    document.body.dataset.state = "error";
  }
}

function showCounts(answer) {
  $("store-name").textContent = answer.store;
  const list = $("counts");
  list.replaceChildren();
  const chosen = checked("states");
  for (const state of STATES) {
    const count = answer.summary.states[state];
    const button = el("button", null, "count " + state);
    button.type = "button";
    button.dataset.state = state;
    button.dataset.count = String(count);
    button.setAttribute("aria-pressed", String(chosen.length === 1 && chosen[0] === state));
    button.append(el("strong", count.toLocaleString("en")), " " + state,
      el("span", MEANING[state], "meaning"));
    button.addEventListener("click", () => onlyState(state));
    const item = el("li");
    item.append(button);
    list.append(item);
  }
  const notes = [];
  const causes = Object.entries(answer.summary.causes);
  if (causes.length) notes.push("outages by cause: " + causes.map(([c, n]) => c + " " + n).join(", "));
  for (const [flag, count] of Object.entries(answer.summary.flags)) {
    if (count) notes.push(flag + " " + count.toLocaleString("en"));
  }
  if (answer.summary.unreadable) {
    const named = answer.summary.unreadable_keys; // the first ten: the count says how many
    notes.push("unreadable " + answer.summary.unreadable.toLocaleString("en") + " (" +
      named.join(", ") + (answer.summary.unreadable > named.length ? ", ..." : "") + ")");
  }
  const extra = el("li", notes.join("; "), "notes");
  list.append(extra);
}

function onlyState(state) {
  const boxes = Array.from(document.querySelectorAll("#states input"));
  const only = boxes.filter((b) => b.checked).map((b) => b.value);
  const again = only.length === 1 && only[0] === state;
  for (const box of boxes) box.checked = !again && box.value === state;
  load();
}

function stamp(seconds) {
  if (seconds === null || seconds === undefined) return "-";
  return new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ");
}

function counted(n, word) {
  return n + " " + word + (n === 1 ? "" : "s");
}

function notes(row) {
  const parts = [];
  if (row.cause) {
    parts.push(row.cause + ", " + row.failures + " failed fetch" + (row.failures === 1 ? "" : "es"));
  }
  if (row.expired) parts.push("expired");
  if (row.cut) parts.push("cut at the size cap");
  if (row.redirected_to) parts.push("redirected to " + row.redirected_to);
  if (row.errors || row.warnings) {
    parts.push("lint: " + counted(row.errors, "error") + ", " + counted(row.warnings, "warning"));
  }
  if (row.forbids_all) parts.push("forbids everything");
  if (row.pace !== null && row.pace !== undefined) {
    parts.push("asks " + row.pace + " s between requests (crawl-delay)");
  }
  parts.push(row.reason || String(row.status));
  return parts.join("; ");
}

function showRows(answer) {
  const total = answer.matched;
  $("matched").textContent = "(" + total.toLocaleString("en") + (total > answer.rows.length ?
    ", the first " + answer.rows.length + " shown" : "") + ")";
  const body = document.querySelector("#report tbody");
  body.replaceChildren();
  const heads = Array.from(document.querySelectorAll("#report thead th")).map((th) => th.textContent);
  for (const row of answer.rows) {
    const tr = el("tr");
    tr.dataset.origin = row.origin;
    tr.dataset.state = row.state;
    tr.dataset.status = row.status === null ? "" : String(row.status);
    tr.dataset.cut = String(row.cut);
    tr.dataset.redirected = String(row.redirected);
    if (answer.deep) tr.dataset.forbids = String(row.forbids_all);
    const open = el("a", row.origin);
    open.href = "/?" + new URLSearchParams({ robots_url: row.robots_url, source: "stored" }).toString();
    open.setAttribute("aria-label", "open the stored robots.txt of " + row.origin + " in the Tester");
    const origin = el("td", null, "origin");
    origin.append(open);
    const state = el("td", null, "state");
    state.append(el("span", row.state, "badge " + row.state));
    const action = el("td", null, "action");
    const refetch = el("button", "Refetch", "refetch");
    refetch.type = "button";
    refetch.setAttribute("aria-label", "Refetch the robots.txt of " + row.origin);
    refetch.addEventListener("click", () => askOne(row.origin, refetch));
    action.append(refetch);
    tr.append(origin, state, el("td", row.status === null ? "-" : row.status),
      el("td", stamp(row.checked), "time"), el("td", stamp(row.since), "time"),
      el("td", stamp(row.until), "time"),
      el("td", row.size === null ? "-" : row.size.toLocaleString("en")), el("td", notes(row), "notes"),
      action);
    Array.from(tr.cells).forEach((td, i) => { td.dataset.label = heads[i]; });
    body.append(tr);
  }
  const button = $("refetch-all");
  button.textContent = "Refetch all " + total.toLocaleString("en");
  button.disabled = total === 0 || total > answer.max_refetch;
  $("refetch-note").textContent = total > answer.max_refetch ? "at most " +
    answer.max_refetch.toLocaleString("en") + " at once: narrow the filter" : "";
}

// --- Refetch: asked first, done with the token ---------------------------------

function ask(what, then, back) {
  page.pending = then;
  page.back = back;
  $("refetch-what").textContent = what;
  $("refetch-dialog").showModal();
}

function askOne(origin, back) {
  ask("This deletes what " + page.answer.store + " keeps for " + origin + ". Every crawl " +
    "sharing that store, running ones included, then fetches its robots.txt again at its " +
    "next request to the site.", () => refetchOne(origin), back);
}

function askAll() {
  const total = page.answer.matched;
  ask("This deletes what " + page.answer.store + " keeps for the " + total.toLocaleString("en") +
    " origins this filter shows. Every crawl sharing that store, running ones included, then " +
    "fetches their robots.txt again at its next request to each site.", refetchAll, $("refetch-all"));
}

async function refetchOne(origin) {
  try {
    const done = await call("POST", "/api/forget", { url: origin + "/" });
    await load((done.forgotten ? "forgot " : "nothing was kept for ") + done.origin + ": every " +
      "worker sharing the store fetches its robots.txt again on its next request.");
  } catch (error) {
    setStatus("refetch failed: " + error.message);
  }
}

async function refetchAll() {
  const body = { ...filters(), expect: page.answer.matched };
  try {
    const done = await call("POST", "/api/forget-many", body);
    await load("forgot " + done.forgotten + " of " + done.origins + " origins in " + done.store +
      ": every worker sharing the store fetches their robots.txt again.");
  } catch (error) {
    setStatus("refetch failed: " + error.message);
  }
}

function closeDialog(confirmed) {
  $("refetch-dialog").close();
  const then = page.pending;
  page.pending = null;
  if (page.back) page.back.focus();
  if (confirmed && then) then();
}

// --- start --------------------------------------------------------------------------

async function start() {
  const config = await call("GET", "/api/config");
  fill(new URLSearchParams(location.search));
  $("filters").addEventListener("submit", (event) => {
    event.preventDefault();
    load();
  });
  $("refetch-all").addEventListener("click", askAll);
  $("refetch-yes").addEventListener("click", () => closeDialog(true));
  $("refetch-no").addEventListener("click", () => closeDialog(false));
  $("refetch-dialog").addEventListener("cancel", () => { page.pending = null; });
  if (!config.store) {
    $("store-help").hidden = false;
    $("apply").disabled = true;
    document.body.dataset.state = "no-store";
    return;
  }
  await load();
}

document.addEventListener("DOMContentLoaded", () => {
  start().catch((error) => setStatus("cannot start: " + error.message));
});
