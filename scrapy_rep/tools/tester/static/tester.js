// The robots.txt Tester's page. It only shows what the server answers: every
// verdict comes from scrapy_rep's engine through /api/test, every finding
// from lint. Everything taken from a robots.txt, a header or the URL is
// written with textContent, never as markup. The editor and lint's findings
// are in editor.js, selecting a result in select.js, the link to a test in
// link.js.
"use strict";

import { $, call, el } from "./dom.js";
import { Editor, showFindings } from "./editor.js";
import { showLink } from "./link.js";
import { Selection } from "./select.js";

const state = {
  source: "text", // "text", "live" or "stored"
  robotsUrl: "", // the URL the live or stored text came from
  baseline: null, // the live or stored text, to compare the edits with
  keepText: false, // a link carried an edited text: the next fetch keeps it
  access: "", // "allow" / "closed" when the fetch gave no rules
  accessReason: "",
  config: null,
  runs: 0,
  pending: null,
  forgottenAt: null,
};
let editor = null; // editor.js's Editor, made at start
let selection = null; // select.js's Selection of a result

function lines(id) {
  return $(id).value.split("\n").map((s) => s.trim()).filter((s) => s !== "");
}

function purposes() {
  return Array.from(document.querySelectorAll("#purposes input:checked")).map((i) => i.value);
}

function setStatus(text) {
  $("status").textContent = text;
}

// --- the page's state lives in its URL (link.js) ----------------------------

function remember() {
  showLink({
    text: editor.value,
    robotsUrl: $("robots-url").value.trim(),
    fetchedUrl: state.robotsUrl,
    source: state.source,
    baseline: state.baseline,
    urls: lines("urls"),
    agents: lines("agents"),
    purposes: purposes(),
  }, state.config.link_limit);
}

// --- testing ----------------------------------------------------------------

function schedule() {
  clearTimeout(state.pending);
  state.pending = setTimeout(run, 120);
}

async function run() {
  const text = editor.value;
  const unedited = state.baseline !== null && text === state.baseline;
  const body = {
    robots: text,
    urls: lines("urls"),
    agents: lines("agents"),
    purposes: purposes(),
    compare: state.baseline,
    access: unedited ? state.access : "",
    access_reason: unedited ? state.accessReason : "",
  };
  try {
    const answer = await call("POST", "/api/test", body);
    showFindings(answer, editor, $("findings"), $("lint-summary"));
    showLicenses(answer.licenses);
    showRows(answer.rows, body.purposes);
    showDiff(answer.diff);
    remember();
    state.runs += 1;
    document.body.dataset.runs = String(state.runs);
    document.body.dataset.state = "ready";
  } catch (error) {
    setStatus("test failed: " + error.message);
    document.body.dataset.state = "error";
  }
}

function showRows(rows, labels) {
  const body = document.querySelector("#results tbody");
  body.replaceChildren();
  for (const row of rows) {
    const deciding = []; // the lines that decide this result, lit when it is selected
    const tr = el("tr");
    tr.dataset.url = row.url;
    tr.dataset.agent = row.agent;
    tr.dataset.verdict = row.verdict;
    tr.dataset.line = row.line === null ? "" : String(row.line);
    tr.dataset.group = row.group === null ? "" : row.group;
    tr.append(selection.verdictCell(row));
    tr.append(el("td", row.url, "url"));
    tr.append(el("td", row.tokens.join(", ") || "(no token: only * applies)"));
    tr.append(el("td", row.group === null ? "(none)" : row.group));
    let why;
    if (row.rule && row.line) {
      const kind = row.rule.kind.charAt(0).toUpperCase() + row.rule.kind.slice(1);
      why = "line " + row.line + ": " + kind + ": " + row.rule.pattern;
      deciding.push(row.line);
    } else if (row.rule) {
      why = row.rule.pattern;
    } else {
      why = { "no-rule": "no rule matches: allowed", "no-group": "no group applies: allowed",
              "robots-txt": "robots.txt itself is always allowed" }[row.reason] || row.reason;
    }
    tr.append(el("td", why));
    const usage = el("td");
    for (const label of labels) {
      const decision = row.usage[label];
      if (!decision) continue;
      const by = decision.by.map((b) => "line " + b.line + (b.global ? " (global)" : "") +
        ": " + b.text).join("; ");
      const item = el("span", label + ": " + decision.state + (by ? " (" + by + ")" : ""),
        "usage " + decision.state);
      item.dataset.purpose = label;
      item.dataset.state = decision.state;
      item.dataset.lines = decision.by.map((b) => b.line).join(" ");
      item.dataset.global = decision.by.filter((b) => b.global).map((b) => b.line).join(" ");
      decision.by.forEach((b) => deciding.push(b.line));
      usage.append(item);
    }
    tr.append(usage);
    selection.pickable(tr, deciding);
    body.append(tr);
  }
  selection.restore();
}

// The site's licence URLs (RSL 1.0 License lines, docs/spec.md §7.3), as the
// crawl hands them to the spider; the licences themselves are not fetched.
function showLicenses(licenses) {
  const list = $("licenses");
  list.replaceChildren();
  list.hidden = !licenses.length;
  if (!licenses.length) return;
  list.append(el("span", "Licence terms (RSL License, not fetched): "));
  licenses.forEach((url, i) => list.append(el("span", (i ? ", " : "") + url, "license")));
}

function showDiff(diff) {
  const pre = $("diff");
  pre.replaceChildren();
  if (diff === null) {
    pre.textContent = "Fetch the live file or show the stored one to compare it with your edits.";
    return;
  }
  if (diff.length === 0) {
    pre.textContent = "No difference: the edited text is the " + state.source + " file.";
    return;
  }
  const cls = { "+": "add", "-": "del", "@": "hunk", " ": "same" };
  for (const d of diff) pre.append(el("span", (d.op === "@" ? "" : d.op) + d.text, cls[d.op]));
}

// --- sources ----------------------------------------------------------------

function info(id, text, kind) {
  const box = $(id);
  box.hidden = false;
  box.className = "info" + (kind ? " " + kind : "");
  box.textContent = text;
}

async function fetchLive() {
  const url = $("robots-url").value.trim();
  setStatus("fetching " + url + " ...");
  try {
    const got = await call("GET", "/api/live?url=" + encodeURIComponent(url));
    state.source = "live";
    state.robotsUrl = got.url; // the origin's robots.txt: what was fetched
    $("robots-url").value = got.url;
    state.baseline = got.body;
    state.access = got.kind === "success" ? "" : got.kind === "unavailable" ? "allow" : "closed";
    state.accessReason = got.message;
    const kept = keepLinkedText(got.body);
    const head = got.headers.map((h) => h[0] + ": " + h[1]).join("\n");
    const where = got.hops ? " after " + got.hops + " redirect(s) to " + got.final_url : "";
    const verdict = got.kind === "success" ? "rules apply" :
      got.kind === "unavailable" ? "everything allowed" : "the crawl fetches nothing from this site";
    info("fetch-info", "live " + got.url + ": " + (got.status === null ? "no answer" : "HTTP " + got.status) +
      where + " - " + got.kind + ": " + verdict + (got.message ? "\n" + got.message : "") +
      (got.cut ? "\nbody cut at the crawl's size limit" : "") + kept + (head ? "\n\n" + head : ""),
      got.kind === "success" ? "" : got.kind === "unavailable" ? "warn" : "bad");
    setStatus("");
    await run();
  } catch (error) {
    info("fetch-info", "cannot fetch: " + error.message, "bad");
    setStatus("");
  }
}

// The text a link carried beside its robots.txt URL is an edit of that
// file: the first fetch (or stored copy) becomes what it is compared with,
// and the editor keeps the text. Otherwise the fetched text is shown.
function keepLinkedText(body) {
  if (!state.keepText) {
    editor.value = body;
    return "";
  }
  state.keepText = false;
  return "\nthe edited text from the link is kept: 3. compares it with this file";
}

function age(seconds) {
  if (seconds < 120) return Math.round(seconds) + " s";
  if (seconds < 7200) return Math.round(seconds / 60) + " min";
  if (seconds < 172800) return Math.round(seconds / 3600) + " h";
  return Math.round(seconds / 86400) + " days";
}

function when(stamp) {
  return stamp === null ? "never" : new Date(stamp.at * 1000).toISOString().replace(".000", "") +
    " (" + age(stamp.age) + " ago)";
}

async function loadStored(quiet) {
  const url = $("robots-url").value.trim();
  try {
    const got = await call("GET", "/api/stored?url=" + encodeURIComponent(url));
    const box = $("store-info");
    box.dataset.kept = String(got.kept);
    box.dataset.fetchedAt = got.kept ? String(got.fetched.at) : "";
    if (!got.kept) {
      info("store-info", "stored (" + got.store + "): nothing kept for " + got.origin +
        (state.forgottenAt ? "; forgotten, waiting for a worker to fetch it again" : ""), "warn");
      return got;
    }
    let text = "stored (" + got.store + ") for " + got.origin + ": " + got.outcome +
      " (" + (got.reason || got.status) + ")\nfetched at " + when(got.fetched) +
      "\nexpires " + new Date(got.expires_at * 1000).toISOString() + (got.expired ? " (expired)" : "") +
      "\nlast good copy " + when(got.good) +
      (got.body_bytes !== null ? ", " + got.body_bytes + " bytes" : "") +
      "\naccess now: " + got.access + " - " + got.access_reason;
    if (got.closed) {
      text += "\nclosed: every request to this site is dropped until " +
        (got.closed_until ? new Date(got.closed_until * 1000).toISOString() +
          ", unless robots.txt answers sooner" : "robots.txt or a page of the site answers") +
        " (" + got.failures + " failed fetch" + (got.failures === 1 ? "" : "es") + " so far)";
    }
    if (state.forgottenAt && got.fetched.at > state.forgottenAt) {
      text += "\nnew version first seen " + when(got.fetched) + ", after Refetch: " +
        "compared with the text below in 3.";
      box.dataset.refetched = "true";
      state.forgottenAt = null;
      state.source = "stored";
      state.baseline = got.body === null ? "" : got.body;
      info("store-info", text, "");
      await run();
      return got;
    }
    info("store-info", text, got.closed ? "bad" : "");
    if (!quiet) {
      state.source = "stored";
      state.robotsUrl = url;
      state.baseline = got.body === null ? "" : got.body;
      state.access = got.access === "rules" ? "" : got.access;
      state.accessReason = got.access_reason;
      const kept = keepLinkedText(state.baseline);
      if (kept) info("store-info", text + kept, got.closed ? "bad" : "");
      await run();
    }
    return got;
  } catch (error) {
    info("store-info", "store: " + error.message, "bad");
    return null;
  }
}

// Refetch deletes a record every crawl sharing the store relies on: ask first.
function askRefetch() {
  const url = $("robots-url").value.trim();
  let origin = url;
  try {
    origin = new URL(url).origin;
  } catch (error) {
    // not a URL: the server says so when asked
  }
  $("refetch-what").textContent = "This deletes what " + state.config.store + " keeps for " +
    origin + ". Every crawl sharing that store, running ones included, then fetches its " +
    "robots.txt again at its next request to the site.";
  $("refetch-dialog").showModal();
}

async function refetch() {
  const url = $("robots-url").value.trim();
  try {
    const done = await call("POST", "/api/forget", { url });
    state.forgottenAt = done.at;
    info("store-info", (done.forgotten ? "forgot " : "nothing was kept for ") + done.origin +
      " in " + done.store + ": every worker sharing it fetches robots.txt again on its next " +
      "request. Waiting for the new version...", "warn");
    watch();
  } catch (error) {
    info("store-info", "refetch failed: " + error.message, "bad");
  }
}

function watch() {
  setTimeout(async () => {
    if (state.forgottenAt === null) return;
    await loadStored(true);
    if (state.forgottenAt !== null) watch();
  }, 2000);
}

function download() {
  const blob = new Blob([editor.value], { type: "text/plain" });
  const link = el("a");
  link.href = URL.createObjectURL(blob);
  link.download = "robots.txt";
  document.body.append(link);
  link.click();
  link.remove();
}

// --- start --------------------------------------------------------------------

function legend(meaning) {
  const items = Object.entries(meaning).map(([severity, means]) => {
    const item = el("li", null, severity);
    item.append(el("strong", severity), ": " + means);
    return item;
  });
  const lit = el("li", null, "decides");
  lit.append(el("strong", "lit"), ": decides the selected result");
  $("legend").replaceChildren(...items, lit);
}

async function start() {
  const config = await call("GET", "/api/config");
  state.config = config;
  editor = new Editor($("robots"), $("editor-lines"), $("editor"));
  selection = new Selection(document.querySelector("#results tbody"), editor);
  legend(config.severities);
  const query = new URLSearchParams(location.search);
  const chosen = query.getAll("purpose");
  for (const label of config.labels) {
    const box = el("input");
    box.type = "checkbox";
    box.value = label;
    box.checked = chosen.length ? chosen.includes(label) : config.purposes.includes(label);
    box.addEventListener("change", schedule);
    const label_ = el("label");
    label_.append(box, document.createTextNode(" " + label));
    $("purposes").append(label_);
  }
  $("urls").value = (query.getAll("url").length ? query.getAll("url") : ["/"]).join("\n");
  $("agents").value = (query.getAll("agent").length ? query.getAll("agent") : config.agents).join("\n");
  if (!config.store) {
    $("load-stored").disabled = $("refetch").disabled = true;
    $("store-help").hidden = false;
  }
  for (const id of ["robots", "urls", "agents"]) $(id).addEventListener("input", schedule);
  $("robots-url").addEventListener("input", remember); // the link names it
  $("fetch-live").addEventListener("click", fetchLive);
  $("load-stored").addEventListener("click", () => loadStored(false));
  $("refetch").addEventListener("click", askRefetch);
  $("refetch-yes").addEventListener("click", () => {
    $("refetch-dialog").close();
    refetch();
  });
  $("refetch-no").addEventListener("click", () => $("refetch-dialog").close());
  $("download").addEventListener("click", download);
  // A link fills the form and may show the stored copy (a read); it never
  // fetches: only the page's own Fetch live and Refetch now buttons do.
  const robotsUrl = query.get("robots_url");
  if (robotsUrl) $("robots-url").value = robotsUrl;
  editor.value = query.get("robots") || "";
  state.keepText = Boolean(robotsUrl) && query.has("robots");
  if (robotsUrl && query.get("source") === "stored") {
    await loadStored(false);
    return;
  }
  if (robotsUrl) {
    info("fetch-info", "The link names " + robotsUrl + ": press Fetch live to fetch the " +
      "robots.txt of its site" + (state.keepText ? " and compare it with the edited text " +
      "below (3.)." : "."), "warn");
  }
  await run();
}

document.addEventListener("DOMContentLoaded", () => {
  start().catch((error) => setStatus("cannot start: " + error.message));
});
