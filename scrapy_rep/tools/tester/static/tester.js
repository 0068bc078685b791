// The robots.txt Tester's page. It only shows what the server answers: every
// verdict comes from scrapy_rep's engine through /api/test. Everything taken
// from a robots.txt, a header or the URL is written with textContent, never
// as markup.
"use strict";
(function () {
  const TOKEN = document.querySelector('meta[name="tester-token"]').content;
  const $ = (id) => document.getElementById(id);
  const state = {
    source: "text", // "text", "live" or "stored"
    robotsUrl: "",
    baseline: null, // the live or stored text, to compare the edits with
    access: "", // "allow" / "disallow" when the fetch gave no rules
    accessReason: "",
    runs: 0,
    pending: null,
    forgottenAt: null,
  };

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  async function call(method, path, body) {
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

  function lines(id) {
    return $(id).value.split("\n").map((s) => s.trim()).filter((s) => s !== "");
  }

  function purposes() {
    return Array.from(document.querySelectorAll("#purposes input:checked")).map((i) => i.value);
  }

  function setStatus(text) {
    $("status").textContent = text;
  }

  // --- the page's state lives in its URL --------------------------------------

  function shareUrl() {
    const q = new URLSearchParams();
    const text = $("robots").value;
    if (state.source !== "text" && state.baseline === text && state.robotsUrl) {
      q.set("robots_url", state.robotsUrl);
      if (state.source === "stored") q.set("source", "stored");
    } else {
      q.set("robots", text);
    }
    lines("urls").forEach((u) => q.append("url", u));
    lines("agents").forEach((a) => q.append("agent", a));
    purposes().forEach((p) => q.append("purpose", p));
    return location.pathname + "?" + q.toString();
  }

  function remember() {
    const url = shareUrl();
    history.replaceState(null, "", url);
    $("share-link").href = url;
  }

  // --- testing ----------------------------------------------------------------

  function schedule() {
    clearTimeout(state.pending);
    state.pending = setTimeout(run, 120);
  }

  async function run() {
    const text = $("robots").value;
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
      showLines(answer);
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

  function showLines(answer) {
    const list = $("lines");
    list.replaceChildren();
    for (const line of answer.lines) {
      const item = el("li", null, line.class);
      item.dataset.line = String(line.n);
      item.append(el("span", line.text === "" ? "\u00a0" : line.text, "text"));
      for (const f of line.findings) {
        const note = el("span", f.severity + " " + f.code + ": " + f.message, "finding " + f.severity);
        if (f.hint) note.title = f.hint;
        item.append(note);
      }
      list.append(item);
    }
    $("lint-summary").textContent =
      "(" + answer.errors + " error(s), " + answer.warnings + " warning(s))";
    const licenses = $("licenses");
    licenses.replaceChildren();
    licenses.hidden = !answer.licenses.length;
    if (answer.licenses.length) licenses.append(el("span", "Licence terms (RSL License, not fetched): "));
    answer.licenses.forEach((url, i) => licenses.append(el("span", (i ? ", " : "") + url, "license")));
  }

  function showRows(rows, labels) {
    const body = document.querySelector("#results tbody");
    body.replaceChildren();
    const deciding = new Set();
    for (const row of rows) {
      const tr = el("tr");
      tr.dataset.url = row.url;
      tr.dataset.agent = row.agent;
      tr.dataset.verdict = row.verdict;
      tr.dataset.line = row.line === null ? "" : String(row.line);
      tr.dataset.group = row.group === null ? "" : row.group;
      tr.append(el("td", row.verdict, "verdict"));
      tr.append(el("td", row.url));
      tr.append(el("td", row.tokens.join(", ") || "(no token: only * applies)"));
      tr.append(el("td", row.group === null ? "(none)" : row.group));
      let why;
      if (row.rule && row.line) {
        const kind = row.rule.kind.charAt(0).toUpperCase() + row.rule.kind.slice(1);
        why = "line " + row.line + ": " + kind + ": " + row.rule.pattern;
        deciding.add(row.line);
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
        decision.by.forEach((b) => deciding.add(b.line));
        usage.append(item);
      }
      tr.append(usage);
      tr.addEventListener("click", () => focusLine(row.line));
      body.append(tr);
    }
    for (const item of document.querySelectorAll("#lines li")) {
      item.classList.toggle("decides", deciding.has(Number(item.dataset.line)));
    }
  }

  function focusLine(number) {
    for (const item of document.querySelectorAll("#lines li")) {
      const hit = number !== null && Number(item.dataset.line) === number;
      item.classList.toggle("focus", hit);
      if (hit) item.scrollIntoView({ block: "nearest" });
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
      state.robotsUrl = url;
      state.baseline = got.body;
      state.access = got.kind === "success" ? "" : got.kind === "unavailable" ? "allow" : "disallow";
      state.accessReason = got.message;
      $("robots").value = got.body;
      const head = got.headers.map((h) => h[0] + ": " + h[1]).join("\n");
      const where = got.hops ? " after " + got.hops + " redirect(s) to " + got.final_url : "";
      const verdict = got.kind === "success" ? "rules apply" :
        got.kind === "unavailable" ? "everything allowed" : "the crawl fetches nothing from this site";
      info("fetch-info", "live: " + (got.status === null ? "no answer" : "HTTP " + got.status) +
        where + " - " + got.kind + ": " + verdict + (got.message ? "\n" + got.message : "") +
        (got.cut ? "\nbody cut at the crawl's size limit" : "") + (head ? "\n\n" + head : ""),
        got.kind === "success" ? "" : got.kind === "unavailable" ? "warn" : "bad");
      setStatus("");
      await run();
    } catch (error) {
      info("fetch-info", "cannot fetch: " + error.message, "bad");
      setStatus("");
    }
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
        text += "\nclosed until " + (got.closed_until ? new Date(got.closed_until * 1000).toISOString() : "?");
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
        $("robots").value = state.baseline;
        await run();
      }
      return got;
    } catch (error) {
      info("store-info", "store: " + error.message, "bad");
      return null;
    }
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
    const blob = new Blob([$("robots").value], { type: "text/plain" });
    const link = el("a");
    link.href = URL.createObjectURL(blob);
    link.download = "robots.txt";
    document.body.append(link);
    link.click();
    link.remove();
  }

  // --- start --------------------------------------------------------------------

  async function start() {
    const config = await call("GET", "/api/config");
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
      $("refetch").title = "start the tester with --store, or with scrapy robots --serve";
    }
    for (const id of ["robots", "urls", "agents"]) $(id).addEventListener("input", schedule);
    $("fetch-live").addEventListener("click", fetchLive);
    $("load-stored").addEventListener("click", () => loadStored(false));
    $("refetch").addEventListener("click", refetch);
    $("download").addEventListener("click", download);
    const robotsUrl = query.get("robots_url");
    if (robotsUrl) {
      $("robots-url").value = robotsUrl;
      if (query.get("source") === "stored") await loadStored(false);
      else await fetchLive();
    } else {
      $("robots").value = query.get("robots") || "";
      await run();
    }
  }

  document.addEventListener("DOMContentLoaded", () => {
    start().catch((error) => setStatus("cannot start: " + error.message));
  });
})();
