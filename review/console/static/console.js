// The Beacon review console's page script. Every piece of submitted text arrives from the
// console's own server as segments the shared renderer made inert (review/render/mod.ts), and
// goes into the page with textContent only: nothing is ever parsed as markup, and there are no
// templates, links or images.
// Requests go to the console's own origin only (CSP connect-src 'self').
//
// This is the entry module; the others are plain ES modules beside it, served by the same static
// route with no build step: page.js (elements and drawing helpers), session.js (the session
// credential, in memory only), api.js (requests), queue.js (the list), item.js (one submission),
// marks.js (review events, in order) and keys.js (the keyboard).
import { openSession } from "./session.js";
import { api } from "./api.js";
import { download, loadMore, reload, selectAllShown, state } from "./queue.js";
import { drawKeys, toggleHelp } from "./keys.js";
import { button, el, filterPanel, filtersForm, itemView, moreButton, narrow, say } from "./page.js";

/** The integrity facts in the header, then a run of verify. */
async function loadIntegrity() {
  const box = document.getElementById("integrity");
  try {
    const facts = await api("/api/integrity");
    const checkpoint = facts.checkpoint === null
      ? "no checkpoint yet"
      : `checkpoint #${facts.checkpoint.seq}: ${facts.checkpoint.treeSize} submissions, ` +
        `${facts.checkpoint.createdAt.slice(0, 16).replace("T", " ")}`;
    const verify = button("Run verify", runVerify, undefined, { class: "small" });
    box.replaceChildren(
      el("span", {}, [checkpoint]),
      el("span", { id: "verify-result" }, ["verify not run"]),
      verify,
    );
    await runVerify();
  } catch (error) {
    box.textContent = `Cannot read integrity facts: ${error.message}`;
  }
}

/** Runs verify (read-only) and shows whether it passes, and the first reason if not. */
async function runVerify() {
  const result = document.getElementById("verify-result");
  result.textContent = "verifying…";
  try {
    const outcome = await api("/api/verify", {});
    result.className = outcome.passed ? "pass" : "fail";
    // The first line saying what is wrong (lines are already inert text from the server).
    const reason = outcome.lines.find((line) => /^(PROBLEM|FAILED|error):/.test(line));
    result.textContent = outcome.passed
      ? "verify passes"
      : `verify FAILS${
        reason ? `: ${reason.replace(/^(PROBLEM|FAILED|error): /, "").slice(0, 140)}` : ""
      }`;
    result.title = outcome.lines.join("\n");
  } catch (error) {
    result.textContent = `verify could not run: ${error.message}`;
  }
}

filtersForm.addEventListener("submit", (event) => {
  event.preventDefault();
  state.chosen.clear();
  reload();
});
moreButton.addEventListener("click", () => loadMore());
document.getElementById("select-all").addEventListener("click", selectAllShown);
document.getElementById("export-ndjson").addEventListener("click", () => download("ndjson"));
document.getElementById("export-csv").addEventListener("click", () => download("csv"));
document.getElementById("help-button").addEventListener("click", toggleHelp);
if (narrow.matches) filterPanel.open = false;

drawKeys();
openSession().then(() => {
  loadIntegrity();
  reload();
}, (error) => {
  itemView.replaceChildren(el("p", { class: "warning", id: "no-session" }, [error.message]));
  say(error.message);
});
