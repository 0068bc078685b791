// The robots.txt Tester's page. It only shows what the server answers: every
// verdict comes from scrapy_rep's engine through /api/test, every finding
// from lint. Everything taken from a robots.txt, a header or the URL is
// written with textContent, never as markup. The editor and lint's findings
// are in editor.js, selecting a result in select.js, the link to a test in
// link.js.
"use strict";

import { $, call, el, info } from "./dom.js";
import { Editor, showFindings } from "./editor.js";
import { showLink } from "./link.js";
import { Selection } from "./select.js";
import { followAgents, showVersions } from "./versions.js";

const state = {
  source: "text", // "text", "live" or "stored"
  robotsUrl: "", // the URL the live or stored text came from
  baseline: null, // the live or stored text, to compare the edits with
  keepText: false, // a link carried an edited text: the next fetch keeps it
  access: "", // "allow-all" / "closed" when the fetch gave no rules
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
    test: $("url").value.trim(),
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

// The URL typed at the top is tested first, then the others (section 2).
function testedUrls() {
  const quick = $("url").value.trim();
  const more = lines("urls").filter((u) => u !== quick);
  return quick ? [quick, ...more] : more;
}

async function run() {
  const text = editor.value;
  const unedited = state.baseline !== null && text === state.baseline;
  const body = {
    robots: text,
    urls: testedUrls(),
    agents: lines("agents"),
    purposes: purposes(),
    compare: state.baseline,
    access: unedited ? state.access : "",
    access_reason: unedited ? state.accessReason : "",
  };
  try {
    const answer = await call("POST", "/api/test", body);
    showFindings(answer, editor, $("findings"), $("lint-summary"));
    showSiteWide(answer.site_wide);
    showRows(answer.rows, body.purposes);
    showVerdict(answer.rows);
    showLineNotes(answer.lines);
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

// Beside the URL field: the verdict for the URL being typed, for each crawler,
// with its deciding line, and a word when the URL is not what it seems.
function showVerdict(rows) {
  const box = $("verdict");
  const quick = $("url").value.trim();
  box.replaceChildren();
  box.className = "verdict";
  if (!quick) {
    box.textContent = "Type a path (/private/page) or a URL: the crawl's verdict shows here.";
    return;
  }
  const mine = rows.filter((r) => r.url === quick);
  for (const row of mine) {
    const line = el("p", null, "said " + row.verdict);
    line.append(el("strong", row.verdict), " for " + row.agent + ": " +
      why(row).replace(/: allowed$/, "") +
      (row.group === null ? "" : " (group " + row.group + ")"));
    box.append(line);
  }
  const notes = mine.length && mine[0].note ? [mine[0].note] : [];
  const other = otherSite(quick);
  if (other) notes.push(other);
  for (const note of notes) box.append(el("p", note, "note"));
  box.dataset.url = quick;
  box.dataset.verdict = mine.length ? mine[0].verdict : "";
  box.dataset.flagged = String(notes.length > 0);
}

// An absolute URL on another origin than the robots.txt URL: that file does not govern it.
function otherSite(url) {
  let there = null;
  let here = null;
  try {
    there = new URL(url).origin;
    here = new URL($("robots-url").value.trim()).origin;
  } catch (error) {
    return "";
  }
  return there === here ? "" : url + " is on " + there + ", not on " + here +
    ": the crawl asks that site's own robots.txt, not this one.";
}

const REASONS = { "no-rule": "no rule matches: allowed", "no-group": "no group applies: allowed",
                  "robots-txt": "robots.txt itself is always allowed" };

function why(row) {
  if (row.rule && row.line) {
    const kind = row.rule.kind.charAt(0).toUpperCase() + row.rule.kind.slice(1);
    return "line " + row.line + ": " + kind + ": " + row.rule.pattern;
  }
  if (row.rule) return row.rule.pattern;
  if (REASONS[row.reason]) return REASONS[row.reason];
  if (state.access === "closed" && row.verdict === "disallowed") {
    return "the site is closed: every request to it is dropped (" + row.reason + ")";
  }
  return row.reason;
}

// What a Crawl-delay, Request-rate or Sitemap line does, listed beside the
// findings and marked in the editor's gutter (editor.js).
function showLineNotes(lines) {
  const list = $("line-notes");
  list.replaceChildren();
  for (const line of lines.filter((l) => l.note)) {
    const item = el("li");
    item.dataset.line = String(line.n);
    const go = el("button", "line " + line.n, "goto");
    go.type = "button";
    go.addEventListener("click", () => editor.point(line.n));
    item.append(go, " ", el("span", line.note));
    list.append(item);
  }
  list.hidden = $("notes-title").hidden = list.children.length === 0;
}

function showRows(rows, labels) {
  const body = document.querySelector("#results tbody");
  body.replaceChildren();
  $("purposes-head").hidden = labels.length === 0;
  for (const row of rows) {
    const deciding = []; // the lines that decide this result, lit when it is selected
    const tr = el("tr");
    tr.dataset.url = row.url;
    tr.dataset.agent = row.agent;
    tr.dataset.verdict = row.verdict;
    tr.dataset.line = row.line === null ? "" : String(row.line);
    tr.dataset.group = row.group === null ? "" : row.group;
    tr.append(selection.verdictCell(row));
    const url = el("td", row.url, "url");
    if (row.note) url.append(el("span", row.note, "note"));
    tr.append(url);
    tr.append(el("td", row.tokens.join(", ") || "(no token: only * applies)"));
    tr.append(el("td", row.group === null ? "(none)" : row.group));
    if (row.rule && row.line) deciding.push(row.line);
    tr.append(el("td", why(row)));
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
    if (labels.length) {
      if (!usage.children.length) usage.className = "empty"; // no empty "Purposes:" label
      tr.append(usage);
    }
    selection.pickable(tr, deciding);
    body.append(tr);
  }
  selection.restore();
}

// The values of the lines outside any group that cover every URL (the site's
// licence URLs, RSL 1.0 License lines, docs/spec.md §7.3), one line per kind,
// as the crawl hands them to the spider; they are not fetched.
function showSiteWide(kinds) {
  const box = $("site-wide");
  box.replaceChildren();
  const found = kinds.filter((kind) => kind.values.length);
  box.hidden = !found.length;
  for (const kind of found) {
    const about = kind.about.charAt(0).toUpperCase() + kind.about.slice(1);
    const line = el("p", `${about} (not fetched): `);
    kind.values.forEach((value, i) => line.append(el("span", (i ? ", " : "") + value, kind.key)));
    box.append(line);
  }
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

// The editor's hint when it is empty: where a file comes from, or, for a site
// whose robots.txt gave no file, that it is empty and why.
function editorHint() {
  const area = $("robots");
  if (state.access === "closed" && !editor.value) {
    area.placeholder = "(empty: no robots.txt was received, so there is no file to show. " +
      "The site is closed: the crawl drops every request to it; the box above says until when.)";
  } else if (state.access === "allow-all" && !editor.value) {
    area.placeholder = "(empty: the site has no robots.txt, so the crawl may fetch everything.)";
  } else {
    area.placeholder = "Type or paste a robots.txt here, or get one with Fetch live or Show stored.";
  }
  $("editor").dataset.empty = state.access && !editor.value ? state.access : "";
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
    state.access = got.kind === "success" ? "" : got.kind === "unavailable" ? "allow-all" : "closed";
    state.accessReason = got.message;
    const kept = keepLinkedText(got.body);
    editorHint();
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
      "\naccess now: " + got.access + " - " + got.access_reason +
      (got.pace === null ? "" : "\npace: the copy asks " + got.pace + " s between requests of " +
        (got.tokens.join(" or ") || "*") + " (Crawl-delay or Request-rate; the crawl waits so " +
        "only with REP_CRAWL_DELAY = \"obey\")");
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
    await showVersions(url, lines("agents"));
    if (!quiet) {
      state.source = "stored";
      state.robotsUrl = url;
      state.baseline = got.body === null ? "" : got.body;
      state.access = got.access === "rules" ? "" : got.access;
      state.accessReason = got.access_reason;
      const kept = keepLinkedText(state.baseline);
      editorHint();
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
  const note = el("li", null, "note");
  note.append(el("strong", "note"), ": a line that is not a rule; what it does is said beside");
  $("legend").replaceChildren(...items, lit, note);
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
  $("url").value = query.get("test") || "";
  $("urls").value = query.getAll("url").join("\n");
  $("agents").value = (query.getAll("agent").length ? query.getAll("agent") : config.agents).join("\n");
  if (!config.store) {
    $("load-stored").disabled = $("refetch").disabled = true;
    $("store-help").hidden = false;
  }
  for (const id of ["robots", "url", "urls", "agents"]) $(id).addEventListener("input", schedule);
  followAgents(() => lines("agents"));
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
