// The page's state lives in its URL, so a link reproduces a test. A link
// only fills the form: it never makes the Tester fetch (docs/tester.md,
// "Safety"); the live file is fetched when the page's own Fetch live is
// pressed.
"use strict";

import { $, el } from "./dom.js";

// The link's path and query. The robots.txt URL is kept beside an edited
// text, so that a link to "the live file, edited" reopens the comparison
// (after Fetch live); an unedited live or stored file is named by its URL only.
// Without the text (withText false), a link to a live file shows that file.
export function testLink(form, withText = true) {
  const q = new URLSearchParams();
  const unedited = form.baseline !== null && form.text === form.baseline &&
    form.robotsUrl === form.fetchedUrl;
  if (form.robotsUrl) {
    q.set("robots_url", form.robotsUrl);
    if (form.source === "stored" && form.robotsUrl === form.fetchedUrl) q.set("source", "stored");
  }
  if (withText && (!form.robotsUrl || !unedited)) q.set("robots", form.text);
  if (form.test) q.set("test", form.test);
  form.urls.forEach((u) => q.append("url", u));
  form.agents.forEach((a) => q.append("agent", a));
  form.purposes.forEach((p) => q.append("purpose", p));
  return location.pathname + "?" + q.toString();
}

// Put the link in the address bar and under the results, or say plainly
// that it is too long: the server refuses a request target over its limit
// (400), so such a link would open nothing. The address bar then keeps the
// test without its text.
export function showLink(form, limit) {
  const link = testLink(form);
  const anchor = $("share-link");
  const note = $("share-note");
  if (link.length <= limit) {
    history.replaceState(null, "", link);
    anchor.href = link;
    anchor.hidden = false;
    note.textContent = "";
    note.className = "";
    return;
  }
  history.replaceState(null, "", testLink(form, false));
  anchor.removeAttribute("href");
  anchor.hidden = true;
  note.className = "info warn";
  note.replaceChildren(el("strong", "This file is too big for a link."),
    " A link to this test would be " + link.length.toLocaleString("en") + " bytes long; the " +
    "Tester opens links of up to " + limit.toLocaleString("en") + " bytes. Share the file " +
    "instead (Download edited), or a shorter version of it.");
}
