// The Beacon review console's page script. Every piece of submitted text arrives from the
// console's own server as segments the shared renderer made inert (src/review/render.ts), and
// goes into the page with textContent only: nothing is ever parsed as markup, and there are no
// templates, links or images.
// Requests go to the console's own origin only (CSP connect-src 'self').

const csrf = document.querySelector('meta[name="csrf-token"]').getAttribute("content");

// The access token arrives in the URL fragment, which no browser sends to a server. It is kept
// in sessionStorage (this origin and port only, this tab only), the fragment is cleared, and it
// goes out only as a request header to this origin. Never in a cookie: cookies are not bound to
// a port, so any other server on 127.0.0.1 would receive them.
const TOKEN_KEY = "beacon-console-token";
const fromFragment = new URLSearchParams(location.hash.slice(1)).get("token");
if (fromFragment !== null) {
  sessionStorage.setItem(TOKEN_KEY, fromFragment);
  history.replaceState(null, "", location.pathname);
}
const accessToken = sessionStorage.getItem(TOKEN_KEY) ?? "";
const queueList = document.getElementById("queue");
const itemView = document.getElementById("item");
const statusBar = document.getElementById("status");
const filtersForm = document.getElementById("filters");
const moreButton = document.getElementById("more");

const state = { items: [], selected: -1, next: null, item: null };

/** An element with attributes and children (strings become text nodes). */
function el(tag, attributes = {}, children = []) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null) node.setAttribute(name, String(value));
  }
  for (const child of children) {
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

/** One line of segments: escapes marked, text isolated, all through text nodes. */
function segmentLine(segments) {
  const line = el("div", { class: "line", dir: "ltr" });
  for (const segment of segments) {
    const span = el("span", {
      class: segment.kind === "escape" ? "esc" : segment.kind === "prefix" ? "prefix" : "t",
    });
    span.textContent = segment.text;
    line.append(span);
  }
  return line;
}

function segmentLines(lines, className) {
  const block = el("div", { class: className });
  for (const line of lines) block.append(segmentLine(line));
  return block;
}

function inline(segments) {
  const span = el("span", { class: "t", dir: "ltr" });
  for (const segment of segments ?? []) {
    const part = el("span", { class: segment.kind === "escape" ? "esc" : "t" });
    part.textContent = segment.text;
    span.append(part);
  }
  return span;
}

function say(text) {
  statusBar.textContent = text;
}

async function api(path, body) {
  const response = await fetch(
    path,
    body === undefined
      ? { credentials: "omit", headers: { authorization: `Bearer ${accessToken}` } }
      : {
        method: "POST",
        credentials: "omit",
        headers: {
          authorization: `Bearer ${accessToken}`,
          "content-type": "application/json",
          "x-csrf-token": csrf,
        },
        body: JSON.stringify(body),
      },
  );
  const value = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new Error(value.error ?? `HTTP ${response.status}`);
  return value;
}

function filterQuery(cursor) {
  const params = new URLSearchParams();
  for (const [name, value] of new FormData(filtersForm)) {
    if (String(value).trim() !== "") params.set(name, String(value).trim());
  }
  if (cursor) params.set("cursor", cursor);
  return params.toString();
}

function queueEntry(item, index) {
  const li = el("li", {
    role: "option",
    "aria-selected": index === state.selected ? "true" : "false",
    "data-index": index,
    id: `item-${index}`,
  });
  const meta = el("div", { class: "meta" }, [
    `${item.id.slice(0, 12)} ${item.receivedAt.slice(0, 16).replace("T", " ")} ` +
    `${item.surface}/${item.kind} sig:${item.signer} `,
    el("span", { class: `status-${item.status}` }, [item.status]),
    item.flagged ? " ! escaped characters" : "",
    item.redacted ? " redacted" : "",
  ]);
  const preview = el("div", { class: "preview" });
  if (item.sender) preview.append(inline(item.sender), " · ");
  preview.append(inline(item.preview));
  li.append(meta, preview);
  li.addEventListener("click", () => select(index));
  return li;
}

function drawQueue() {
  queueList.replaceChildren(...state.items.map(queueEntry));
  queueList.setAttribute("role", "listbox");
  queueList.setAttribute("aria-label", "Submissions");
  moreButton.hidden = state.next === null;
}

async function loadQueue(append) {
  try {
    const page = await api(`/api/queue?${filterQuery(append ? state.next : null)}`);
    state.items = append ? [...state.items, ...page.items] : page.items;
    state.next = page.next;
    document.getElementById("search-mode").textContent = page.search === null
      ? ""
      : page.search === "fts5"
      ? "search: full-text index (SQLite FTS5)"
      : "search: plain substring match (FTS5 unavailable here)";
    if (!append) state.selected = -1;
    drawQueue();
    say(`${state.items.length} shown${state.next === null ? "" : ", more available"}`);
    if (!append && state.items.length > 0) await select(0);
    if (state.items.length === 0) itemView.replaceChildren(el("p", {}, ["Nothing matches."]));
  } catch (error) {
    say(`Cannot load the queue: ${error.message}`);
  }
}

function button(label, action, key) {
  const node = el("button", { type: "button", "aria-keyshortcuts": key }, [label]);
  node.addEventListener("click", action);
  return node;
}

function drawItem(item) {
  const fields = el("dl", { class: "fields" });
  for (const field of item.fields) {
    fields.append(el("dt", {}, [field.label]), el("dd", {}, [segmentLines(field.value, "value")]));
  }
  fields.append(el("dt", {}, ["status"]), el("dd", {}, [item.status]));
  const integrity = el("dl", { class: "fields" }, [
    el("dt", {}, ["digest"]),
    el("dd", {}, [item.integrity.digest]),
    el("dt", {}, ["receipt"]),
    el("dd", {}, [
      item.integrity.signature === null
        ? "signed by the Beacon at intake; the sender holds the signature" +
          (item.integrity.publicKey ? `; check it with key ${item.integrity.publicKey}` : "")
        : `signature ${item.integrity.signature} ` +
          (item.integrity.signatureVerifies ? "(verifies)" : "(does NOT verify)"),
    ]),
  ]);
  const history = el("ol", { class: "history", "aria-label": "History" });
  const superseded = new Set(item.history.map((event) => event.supersedes).filter((s) => s));
  for (const event of item.history) {
    const entry = el("li", { class: superseded.has(event.seq) ? "superseded" : undefined }, [
      `#${event.seq} ${event.createdAt} ${event.status ?? "note"}`,
    ]);
    if (event.reviewer) entry.append(" by ", inline(event.reviewer[0]));
    if (event.supersedes) entry.append(` (corrects #${event.supersedes})`);
    if (event.note) {
      entry.append(segmentLines(event.note, "note"));
      entry.append(button("Correct note", () => openNote(event.seq), undefined));
    }
    history.append(entry);
  }
  const actions = el("div", { class: "actions", role: "toolbar", "aria-label": "Actions" }, [
    button("Previous", () => move(-1), "k"),
    button("Next", () => move(1), "j"),
    button("Mark reviewed", () => mark("reviewed"), "r"),
    button("Mark for follow-up", () => mark("follow-up"), "f"),
    button("Back to new", () => mark("new"), "u"),
    button("Add note", () => openNote(undefined), "n"),
  ]);
  const children = [el("h2", {}, [`Submission ${item.id}`]), actions];
  if (item.warning) children.push(el("p", { class: "warning" }, [item.warning]));
  if (item.redaction) {
    const redaction = el("p", { class: "warning" }, [
      `Content redacted ${item.redaction.createdAt} by `,
      inline(item.redaction.by[0]),
      ": ",
    ]);
    redaction.append(segmentLines(item.redaction.reason, "note"));
    children.push(redaction);
  }
  children.push(
    fields,
    el("h3", {}, ["Integrity"]),
    integrity,
    el("h3", {}, ["History"]),
    item.history.length === 0 ? el("p", {}, ["No review event yet."]) : history,
    el("div", { id: "note-area" }),
    el("h3", {}, ["Content"]),
    segmentLines(item.content, "content"),
  );
  itemView.replaceChildren(...children);
}

function openNote(supersedes) {
  const area = document.getElementById("note-area");
  const text = el("textarea", {
    "aria-label": supersedes ? `Corrected note for event ${supersedes}` : "Note",
    maxlength: 4000,
  });
  const save = button(supersedes ? "Save corrected note" : "Save note", async () => {
    if (text.value.trim() === "") return;
    await act({ note: text.value, supersedes }, "note saved");
  });
  const cancel = button("Cancel", () => area.replaceChildren());
  text.addEventListener("keydown", (event) => {
    if (event.key === "Escape") area.replaceChildren();
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) save.click();
  });
  area.replaceChildren(text, save, cancel);
  text.focus();
}

async function select(index) {
  if (index < 0 || index >= state.items.length) return;
  state.selected = index;
  for (const li of queueList.children) {
    li.setAttribute("aria-selected", li.dataset.index === String(index) ? "true" : "false");
  }
  queueList.children[index]?.scrollIntoView({ block: "nearest" });
  try {
    state.item = await api(`/api/item?id=${encodeURIComponent(state.items[index].id)}`);
    drawItem(state.item);
  } catch (error) {
    say(`Cannot load the submission: ${error.message}`);
  }
}

async function move(step) {
  const target = state.selected + step;
  if (target >= state.items.length && state.next !== null) await loadQueue(true);
  if (target >= 0 && target < state.items.length) await select(target);
}

async function act(body, done) {
  const current = state.items[state.selected];
  if (!current) return;
  try {
    const result = await api("/api/event", { id: current.id, ...body });
    if (body.status) current.status = body.status;
    drawQueue();
    await select(state.selected);
    say(`${current.id.slice(0, 12)}: ${done} (review event ${result.seq})`);
  } catch (error) {
    say(`Cannot record it: ${error.message}`);
  }
}

async function mark(status) {
  await act({ status }, `marked ${status}`);
  if (status !== "new") await move(1);
}

async function loadIntegrity() {
  const box = document.getElementById("integrity");
  try {
    const facts = await api("/api/integrity");
    const checkpoint = facts.checkpoint === null
      ? "no checkpoint yet"
      : `latest checkpoint #${facts.checkpoint.seq}: ${facts.checkpoint.treeSize} submissions, ` +
        `${facts.checkpoint.createdAt}`;
    const verify = button("Run verify", runVerify, undefined);
    box.replaceChildren(
      `${facts.submissions} submissions, ${facts.pending} new · ${checkpoint} · `,
      el("span", { id: "verify-result" }, ["verify not run"]),
      " ",
      verify,
    );
    await runVerify();
  } catch (error) {
    box.textContent = `Cannot read integrity facts: ${error.message}`;
  }
}

async function runVerify() {
  const result = document.getElementById("verify-result");
  result.textContent = "verifying…";
  try {
    const outcome = await api("/api/verify", {});
    result.className = outcome.passed ? "" : "fail";
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

document.addEventListener("keydown", (event) => {
  const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(event.target.tagName);
  if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
  const actions = {
    j: () => move(1),
    ArrowDown: () => move(1),
    k: () => move(-1),
    ArrowUp: () => move(-1),
    r: () => mark("reviewed"),
    f: () => mark("follow-up"),
    u: () => mark("new"),
    n: () => openNote(undefined),
    "/": () => filtersForm.elements.q.focus(),
  };
  const action = actions[event.key];
  if (action) {
    event.preventDefault();
    action();
  }
});

filtersForm.addEventListener("submit", (event) => {
  event.preventDefault();
  loadQueue(false);
});
moreButton.addEventListener("click", () => loadQueue(true));

loadIntegrity();
loadQueue(false);
