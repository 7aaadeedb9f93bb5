// The Beacon review console's page script. Every piece of submitted text arrives from the
// console's own server as segments the shared renderer made inert (review/render/mod.ts), and
// goes into the page with textContent only: nothing is ever parsed as markup, and there are no
// templates, links or images.
// Requests go to the console's own origin only (CSP connect-src 'self').

// The page's CSRF token: it goes with the code's exchange only. Every later POST carries the
// token the exchange gave with the session, which no other client can make the console forget.
const pageCsrf = document.querySelector('meta[name="csrf-token"]').getAttribute("content");

// The link review serve prints carries a one-time code in its fragment, which no browser sends
// to a server but every browser keeps in its history. The page spends it at once: it posts it
// to /api/session for a session credential, kept only in this script's memory and sent only as
// a request header to this origin, and clears the fragment. What the history keeps is then a
// spent code. Not sessionStorage: Chromium writes it to the profile on disk (for session
// restore), where a copy of the profile would carry a live credential. Never a cookie: cookies
// are not bound to a port, so any other server on 127.0.0.1 would receive them. A reload
// therefore has no session: the console prints the next link in its terminal for it.
const fromFragment = new URLSearchParams(location.hash.slice(1)).get("code");
if (fromFragment !== null) history.replaceState(null, "", location.pathname);
// The next link opened in this same tab differs from the page's address only in its fragment,
// which browsers treat as a move within the page, running no script: load the page again with
// it, so its code is exchanged as above.
addEventListener("hashchange", () => {
  if (new URLSearchParams(location.hash.slice(1)).has("code")) location.reload();
});

/** The session credential and its CSRF token, from the link's code. */
async function openSession() {
  if (fromFragment === null) {
    throw new Error(
      "this page keeps its session only in memory, so that nothing in the browser's files can " +
        "open the console: a reload or a new tab needs the next link review serve printed in " +
        "its terminal (each link works once)",
    );
  }
  const response = await fetch("/api/session", {
    method: "POST",
    credentials: "omit",
    headers: { "content-type": "application/json", "x-csrf-token": pageCsrf },
    body: JSON.stringify({ code: fromFragment }),
  });
  const value = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(value.error ?? `HTTP ${response.status}`);
  return value;
}
let csrf = "";
let accessToken = "";
const queueList = document.getElementById("queue");
const itemView = document.getElementById("item");
const statusBar = document.getElementById("status");
const filtersForm = document.getElementById("filters");
const filterPanel = document.getElementById("filter-panel");
const moreButton = document.getElementById("more");
const bulkBar = document.getElementById("bulk");
const helpDialog = document.getElementById("help");

/**
 * What the page holds. `ids` mirrors `items` so a page that overlaps what is shown (an item
 * marked since moved from the new phase of the queue to the done phase) adds nothing twice.
 * `chosen` is the bulk selection, by id. `generation` grows with each fresh load of the queue,
 * so an answer to an older request is dropped; `loading` is the one page load in flight, which
 * every caller shares; `view` numbers item requests. Marks wait in `marks` (below).
 */
const state = {
  items: [],
  ids: new Set(),
  chosen: new Set(),
  selected: -1,
  next: null,
  item: null,
  generation: 0,
  loading: null,
  view: 0,
};

/** The statuses, each with its key and button (one table for keys, buttons, legend, help). */
const STATUSES = [
  { status: "reviewed", key: "r", label: "Mark reviewed", short: "reviewed" },
  { status: "follow-up", key: "f", label: "Mark for follow-up", short: "follow-up" },
  { status: "dismissed", key: "d", label: "Mark dismissed", short: "dismissed" },
  { status: "escalated", key: "e", label: "Mark escalated", short: "escalated" },
  { status: "new", key: "u", label: "Back to new", short: "back to new" },
];

/** Every key the page answers: what the legend and the help show, and what it runs. */
const KEYS = [
  { keys: ["j", "ArrowDown"], shown: "j", label: "next", run: (key) => move(1, key) },
  { keys: ["k", "ArrowUp"], shown: "k", label: "previous", run: (key) => move(-1, key) },
  ...STATUSES.map((entry) => ({
    keys: [entry.key],
    shown: entry.key,
    label: entry.short,
    run: (key) => state.chosen.size > 0 ? markChosen(entry.status, key) : mark(entry.status, key),
  })),
  {
    keys: ["x"],
    shown: "x",
    label: "select",
    run: (key) =>
      state.items[state.selected] ? toggleChosen(state.selected) : refuse(key, "nothing to select"),
  },
  {
    keys: ["n"],
    shown: "n",
    label: "note",
    run: (key) => state.item ? openNote(undefined) : refuse(key, "no submission is shown"),
  },
  { keys: ["/"], shown: "/", label: "search", run: () => focusSearch() },
  { keys: ["?"], shown: "?", label: "help", run: () => toggleHelp() },
];

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
  if (response.status === 401) {
    throw new Error(
      "this page's session has ended (the console's next link was opened, or it stopped): " +
        "open the newest link review serve printed",
    );
  }
  const value = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new Error(value.error ?? `HTTP ${response.status}`);
  return value;
}

function filterQuery(extra = {}) {
  const params = new URLSearchParams();
  for (const [name, value] of new FormData(filtersForm)) {
    if (String(value).trim() !== "") params.set(name, String(value).trim());
  }
  for (const [name, value] of Object.entries(extra)) {
    if (value !== null && value !== undefined) params.set(name, value);
  }
  return params.toString();
}

/** What look-alike words read as (their UTS #39 skeletons, as the search folds them). */
function readsAsLine(words) {
  const line = el("div", { class: "reads-as" }, ["reads as: "]);
  words.forEach((word, i) => {
    if (i > 0) line.append(", ");
    line.append(inline(word));
  });
  return line;
}

function chip(status) {
  return el("span", { class: `chip status-${status}` }, [status]);
}

function queueEntry(item, index) {
  const li = el("li", {
    role: "option",
    "aria-selected": index === state.selected ? "true" : "false",
    "data-index": index,
    "data-id": item.id,
    id: `item-${index}`,
    class: state.chosen.has(item.id) ? "chosen" : undefined,
  });
  const box = el("input", {
    type: "checkbox",
    class: "choose",
    "aria-label": `Select ${item.id.slice(0, 12)}`,
    "aria-keyshortcuts": index === state.selected ? "x" : undefined,
  });
  box.checked = state.chosen.has(item.id);
  box.addEventListener("click", (event) => event.stopPropagation());
  box.addEventListener("change", () => toggleChosen(index));
  const meta = el("div", { class: "meta" }, [
    el("span", { class: "id" }, [item.id.slice(0, 12)]),
    el("time", {}, [item.receivedAt.slice(5, 16).replace("T", " ")]),
    el("span", { class: "type" }, [
      `${item.surface === "native" ? "nat" : item.surface}/${
        item.kind === "structured" ? "msg" : "text"
      } sig:${item.signer}`,
    ]),
    item.pendingStatus === undefined ? chip(item.status) : el(
      "span",
      { class: `chip pending status-${item.pendingStatus}`, title: "being recorded" },
      [
        `${item.pendingStatus}…`,
      ],
    ),
    item.flagged ? el("span", { class: "flag", title: "escaped characters" }, ["!"]) : "",
    item.redacted ? el("span", { class: "flag" }, ["redacted"]) : "",
  ]);
  const preview = el("div", { class: "preview" });
  if (item.sender) preview.append(inline(item.sender), " · ");
  preview.append(inline(item.preview));
  const children = [meta, preview];
  if (item.readsAs?.length > 0) children.push(readsAsLine(item.readsAs));
  if (item.failed) children.push(el("div", { class: "failed" }, [item.failed]));
  li.append(box, el("div", { class: "entry" }, children));
  li.addEventListener("click", async () => {
    await select(index);
    if (narrow.matches) itemView.scrollIntoView({ block: "start" });
  });
  return li;
}

function redrawEntry(index) {
  const old = queueList.children[index];
  if (old) old.replaceWith(queueEntry(state.items[index], index));
}

function drawQueue() {
  queueList.replaceChildren(...state.items.map(queueEntry));
  queueList.setAttribute("role", "listbox");
  queueList.setAttribute("aria-label", "Submissions");
  queueList.setAttribute("aria-multiselectable", "false");
  moreButton.hidden = state.next === null;
  drawBulk();
}

function appendEntries(from) {
  for (let index = from; index < state.items.length; index++) {
    queueList.append(queueEntry(state.items[index], index));
  }
  moreButton.hidden = state.next === null;
}

function drawBulk() {
  const count = state.chosen.size;
  bulkBar.hidden = count === 0;
  if (count === 0) return bulkBar.replaceChildren();
  bulkBar.replaceChildren(
    el("span", { class: "bulk-count" }, [`${count} selected`]),
    ...STATUSES.map((entry) =>
      button(
        `${entry.short[0].toUpperCase()}${entry.short.slice(1)} (${count})`,
        () => markChosen(entry.status),
        entry.key,
        {
          "aria-label": `${entry.label}: all ${count} selected`,
          class: `status-button status-${entry.status}`,
        },
      )
    ),
    button("Clear selection", () => {
      state.chosen.clear();
      drawQueue();
    }),
  );
}

function toggleChosen(index) {
  const item = state.items[index];
  if (!item) return;
  if (state.chosen.has(item.id)) state.chosen.delete(item.id);
  else state.chosen.add(item.id);
  redrawEntry(index);
  drawBulk();
}

function selectAllShown() {
  const all = state.items.every((item) => state.chosen.has(item.id));
  for (const item of state.items) {
    if (all) state.chosen.delete(item.id);
    else state.chosen.add(item.id);
  }
  drawQueue();
}

/** Keeps the entries not shown yet, so no submission is ever listed twice. */
function addItems(items) {
  const fresh = items.filter((item) => !state.ids.has(item.id));
  for (const item of fresh) state.ids.add(item.id);
  state.items.push(...fresh);
  return fresh.length;
}

async function fetchPage(append) {
  const generation = state.generation;
  const page = await api(`/api/queue?${filterQuery({ cursor: append ? state.next : null })}`);
  if (generation !== state.generation) return false;
  if (!append) {
    state.items = [];
    state.ids = new Set();
    state.selected = -1;
  }
  const from = state.items.length;
  addItems(page.items);
  state.next = page.next;
  document.getElementById("search-mode").textContent = page.search === null
    ? ""
    : page.search === "fts5"
    ? "search: full-text index (SQLite FTS5)"
    : "search: plain substring match (FTS5 unavailable here)";
  if (append) appendEntries(from);
  else drawQueue();
  return true;
}

/** The next page, once: a caller that asks while a load is in flight waits for that one. */
function loadMore() {
  if (state.loading !== null) return state.loading;
  if (state.next === null) return Promise.resolve();
  const loading = fetchPage(true)
    .then(() => refreshCounts())
    .catch((error) => say(`Cannot load more: ${error.message}`))
    .finally(() => {
      if (state.loading === loading) state.loading = null;
    });
  state.loading = loading;
  return loading;
}

/** The search the list shows now (Esc in the box clears it, when there is one). */
let searchedFor = "";

/** The queue from its start, for the filters in the form; older answers are dropped. */
function reload() {
  searchedFor = filtersForm.elements.q.value.trim();
  state.generation++;
  state.next = null;
  const loading = fetchPage(false)
    .then(async (current) => {
      if (!current) return;
      await refreshCounts();
      if (state.items.length > 0) await select(0);
      else {
        state.item = null;
        itemView.replaceChildren(el("p", { class: "empty" }, ["Nothing matches."]));
      }
    })
    .catch((error) => say(`Cannot load the queue: ${error.message}`))
    .finally(() => {
      if (state.loading === loading) state.loading = null;
    });
  state.loading = loading;
  return loading;
}

async function refreshCounts() {
  try {
    const counts = await api(`/api/counts?${filterQuery()}`);
    document.getElementById("counts").replaceChildren(
      el("span", { class: "count", id: "count-total" }, [String(counts.submissions)]),
      " submissions · ",
      el("span", { class: "count", id: "count-new" }, [String(counts.new)]),
      " new",
    );
    document.getElementById("shown").textContent = `${state.items.length} of ${counts.matching} ` +
      `shown${state.next === null ? "" : ", more below"}`;
  } catch (error) {
    say(`Cannot count: ${error.message}`);
  }
}

function button(label, action, key, attributes = {}) {
  const node = el("button", { type: "button", "aria-keyshortcuts": key, ...attributes }, [label]);
  if (key) node.append(" ", el("kbd", { "aria-hidden": "true" }, [key]));
  node.addEventListener("click", action);
  return node;
}

function drawHistory(item) {
  // The events each later note corrects: only the old note's text is struck through, never the
  // status the same event recorded.
  const correctedBy = new Map();
  for (const event of item.history) {
    if (event.supersedes !== null) correctedBy.set(event.supersedes, event.supersedesNumber);
  }
  const byNumber = new Map(item.history.map((event) => [event.seq, event.number]));
  const history = el("ul", { class: "history", "aria-label": "History" });
  for (const event of item.history) {
    const head = el("div", { class: "event-head" }, [
      el("span", { class: "event-number" }, [`#${event.number}`]),
      el("time", {}, [event.createdAt.replace("T", " ").slice(0, 19)]),
      event.status === null ? el("span", { class: "event-kind" }, ["note"]) : chip(event.status),
    ]);
    if (event.reviewer) {
      head.append(el("span", { class: "by" }, ["by ", inline(event.reviewer[0])]));
    }
    if (event.supersedes !== null) {
      head.append(el("span", { class: "corrects" }, [`corrects #${event.supersedesNumber}`]));
    }
    const entry = el("li", { "data-number": event.number }, [head]);
    if (event.note) {
      if (correctedBy.has(event.seq)) {
        const corrector = item.history.find((later) => later.supersedes === event.seq);
        entry.append(
          el("del", { class: "old-note" }, [segmentLines(event.note, "note")]),
          el("p", { class: "corrected" }, [`corrected by #${byNumber.get(corrector.seq)}`]),
        );
      } else {
        entry.append(
          segmentLines(event.note, "note"),
          button("Correct note", () => openNote(event.seq, event.number), undefined, {
            class: "small",
            "aria-label": `Correct note #${event.number}`,
          }),
        );
      }
    }
    history.append(entry);
  }
  return history;
}

function drawItem(item) {
  // A note being written stays, with its focus, when the same item is drawn again (after a
  // mark of it was recorded).
  const writing = document.getElementById("note-area");
  const keepNote = writing !== null && writing.childElementCount > 0 &&
    itemView.dataset.id === item.id;
  const focused = document.activeElement;
  const fields = el("dl", { class: "fields" });
  for (const field of item.fields) {
    fields.append(el("dt", {}, [field.label]), el("dd", {}, [segmentLines(field.value, "value")]));
  }
  const integrity = el("dl", { class: "fields" }, [
    el("dt", {}, ["digest"]),
    el("dd", {}, [item.integrity.digest]),
    el("dt", {}, ["receipt"]),
    el("dd", {}, [
      item.integrity.signatureReport +
      (item.integrity.signature === null ? "" : ` (signature ${item.integrity.signature})`),
    ]),
  ]);
  const actions = el("div", { class: "actions", role: "toolbar", "aria-label": "Actions" }, [
    button("Previous", () => move(-1), "k"),
    button("Next", () => move(1), "j"),
    ...STATUSES.map((entry) =>
      button(entry.label, () => mark(entry.status, undefined, item.id), entry.key, {
        class: `status-button status-${entry.status}`,
        "aria-pressed": item.status === entry.status ? "true" : "false",
      })
    ),
    button("Add note", () => openNote(undefined), "n"),
  ]);
  const title = el("div", { class: "item-title" }, [
    el("h2", {}, [`Submission ${item.id}`]),
    chip(item.status),
  ]);
  const children = [title, actions];
  if (item.warning) children.push(el("p", { class: "warning" }, [item.warning]));
  if (item.readsAs?.length > 0) children.push(readsAsLine(item.readsAs));
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
    el("h3", {}, ["Content"]),
    segmentLines(item.content, "content"),
    el("h3", {}, ["History"]),
    item.history.length === 0
      ? el("p", { class: "empty" }, ["No review event yet."])
      : drawHistory(item),
    keepNote ? writing : el("div", { id: "note-area" }),
    el("h3", {}, ["Receipt"]),
    fields,
    el("h3", {}, ["Integrity"]),
    integrity,
  );
  itemView.replaceChildren(...children);
  itemView.dataset.id = item.id;
  if (keepNote && writing.contains(focused)) focused.focus();
}

function openNote(supersedes, number) {
  if (!state.item) return;
  const area = document.getElementById("note-area");
  const text = el("textarea", {
    "aria-label": supersedes ? `Corrected note for #${number}` : "Note",
    maxlength: 4000,
  });
  const save = button(
    supersedes ? "Save corrected note" : "Save note",
    async () => {
      if (text.value.trim() === "") return;
      await act({ note: text.value, supersedes }, "note saved");
    },
    undefined,
    { class: "primary" },
  );
  const cancel = button("Cancel", () => area.replaceChildren());
  text.addEventListener("keydown", (event) => {
    if (event.key === "Escape") area.replaceChildren();
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) save.click();
  });
  area.replaceChildren(
    el("p", { class: "hint" }, ["Ctrl-Enter saves, Esc cancels."]),
    text,
    el("div", { class: "actions" }, [save, cancel]),
  );
  text.focus();
}

/**
 * Selects an entry at once (the highlight moves, so the next key is captured on it) and shows
 * it in the item pane. One item request is in flight at a time: keys pressed faster than the
 * answers come skip the entries passed by, and only the latest selection is drawn.
 */
function select(index) {
  if (index < 0 || index >= state.items.length) return;
  state.selected = index;
  for (const li of queueList.children) {
    const current = li.dataset.index === String(index);
    li.setAttribute("aria-selected", current ? "true" : "false");
    // `x` selects the item in view: its check box is the one that key works.
    const box = li.querySelector("input.choose");
    if (current) box?.setAttribute("aria-keyshortcuts", "x");
    else box?.removeAttribute("aria-keyshortcuts");
  }
  queueList.children[index]?.scrollIntoView({ block: "nearest" });
  // Not awaited: the next key is captured on the new selection at once, whatever the pane does.
  showSelected();
}

let itemLoading = null;
let itemWanted = false;

function showSelected() {
  if (itemLoading !== null) {
    itemWanted = true;
    return itemLoading;
  }
  itemView.setAttribute("aria-busy", "true");
  itemLoading = (async () => {
    do {
      itemWanted = false;
      const entry = state.items[state.selected];
      if (!entry) break;
      try {
        const item = await api(`/api/item?id=${encodeURIComponent(entry.id)}`);
        if (state.items[state.selected]?.id === item.id) {
          state.item = item;
          drawItem(item);
        }
      } catch (error) {
        say(`Cannot load the submission: ${error.message}`);
      }
    } while (itemWanted);
  })().finally(() => {
    itemLoading = null;
    itemView.removeAttribute("aria-busy");
  });
  return itemLoading;
}

/** Says that a key did nothing, and why: no key is ever dropped without a word. */
function refuse(key, why) {
  say(`${key}: ${why}`);
  statusBar.classList.add("refused");
}

async function move(step, key) {
  const target = state.selected + step;
  if (target >= state.items.length && state.next !== null) await loadMore();
  if (target >= 0 && target < state.items.length) return select(target);
  if (key !== undefined) {
    refuse(key, step > 0 ? "this is the last submission shown" : "this is the first submission");
  }
}

/**
 * The marks waiting to be recorded, in the order their keys were pressed, each with the id of
 * the entry it was pressed on. One is recorded at a time; the entry shows the status it will
 * get (`pending`) until the answer, and the counts change only then.
 */
const marks = { waiting: [], pending: new Map(), running: false, keys: 0 };

function drawPending() {
  const count = marks.waiting.length + (marks.running ? 1 : 0);
  // Busy while a key waits its turn or a mark is being recorded.
  if (count + marks.keys > 0) document.body.setAttribute("aria-busy", "true");
  else document.body.removeAttribute("aria-busy");
  document.getElementById("pending").textContent = count === 0
    ? ""
    : `${count} mark${count === 1 ? "" : "s"} pending`;
}

/** Queues `status` for each of `ids`; `batch` groups a bulk mark for its one message. */
function queueMarks(ids, status, batch) {
  for (const id of ids) {
    marks.waiting.push({ id, status, batch });
    marks.pending.set(id, (marks.pending.get(id) ?? 0) + 1);
    const index = state.items.findIndex((item) => item.id === id);
    if (index >= 0) {
      state.items[index].pendingStatus = status;
      redrawEntry(index);
    }
  }
  drawPending();
  drain();
}

let countsLoading = null;
let countsWanted = false;
/** The counts read again; one request at a time, and one more if asked for meanwhile. */
function recount() {
  if (countsLoading !== null) {
    countsWanted = true;
    return countsLoading;
  }
  countsLoading = (async () => {
    do {
      countsWanted = false;
      await refreshCounts();
    } while (countsWanted);
  })().finally(() => countsLoading = null);
  return countsLoading;
}

async function drain() {
  if (marks.running) return;
  marks.running = true;
  try {
    while (marks.waiting.length > 0) {
      const mark = marks.waiting.shift();
      let outcome;
      try {
        const result = await api("/api/event", { id: mark.id, status: mark.status });
        outcome = { seq: result.seq };
      } catch (error) {
        outcome = { error: error.message };
      }
      const left = marks.pending.get(mark.id) - 1;
      if (left === 0) marks.pending.delete(mark.id);
      else marks.pending.set(mark.id, left);
      const index = state.items.findIndex((item) => item.id === mark.id);
      if (index >= 0) {
        const item = state.items[index];
        if (outcome.error === undefined) item.status = mark.status;
        else item.failed = `${mark.status} not recorded: ${outcome.error}`;
        if (left === 0) delete item.pendingStatus;
        redrawEntry(index);
      }
      const short = mark.id.slice(0, 12);
      if (mark.batch !== undefined) {
        if (outcome.error === undefined) mark.batch.marked++;
        else mark.batch.failed.push(mark.id);
        if (mark.batch.marked + mark.batch.failed.length === mark.batch.total) {
          const { marked, total, failed } = mark.batch;
          if (failed.length === 0) {
            say(`${marked} submission${marked === 1 ? "" : "s"} marked ${mark.status}`);
          } else {
            // The ones not marked stay selected, to try again.
            for (const id of failed) state.chosen.add(id);
            drawQueue();
            refuse("bulk", `marked ${marked} of ${total} ${mark.status}; then: ${outcome.error}`);
          }
        }
      } else if (outcome.error === undefined) {
        statusBar.classList.remove("refused");
        say(`${short}: marked ${mark.status} (review event ${outcome.seq})`);
      } else refuse(short, `${mark.status} not recorded: ${outcome.error}`);
      drawPending();
      recount();
      if (state.item?.id === mark.id && state.items[state.selected]?.id === mark.id) {
        showSelected();
      }
    }
  } finally {
    marks.running = false;
    drawPending();
  }
}

/** A note or a corrected note, for the submission shown in the item pane. */
async function act(body, done) {
  const current = state.item;
  if (!current) return false;
  try {
    const result = await api("/api/event", { id: current.id, ...body });
    await Promise.all([recount(), showSelected()]);
    say(`${current.id.slice(0, 12)}: ${done} (review event ${result.seq})`);
    return true;
  } catch (error) {
    refuse(current.id.slice(0, 12), `not recorded: ${error.message}`);
    return false;
  }
}

/**
 * A status key or button: marks the entry it was pressed on (the selection at that moment, or
 * for a button the item it sits beside), and moves on to the next at once, so the next key
 * lands on the entry now shown. The mark itself is queued and recorded in order.
 */
function mark(status, key, id) {
  const target = id ?? state.items[state.selected]?.id;
  if (target === undefined) return refuse(key ?? status, "no submission is selected");
  queueMarks([target], status);
  if (status !== "new") {
    const index = state.items.findIndex((item) => item.id === target);
    if (index + 1 < state.items.length || state.next !== null) {
      return move(index + 1 - state.selected);
    }
  }
}

/**
 * Marks every selected submission (one review event each, as a single mark makes), and moves
 * the selection off the entries just marked, so the next key lands on one the reviewer sees.
 */
function markChosen(status, key) {
  if (state.chosen.size === 0) return refuse(key ?? status, "no submission is selected");
  const ids = [...state.chosen];
  state.chosen.clear();
  drawBulk();
  queueMarks(ids, status, { total: ids.length, marked: 0, failed: [] });
  const marked = new Set(ids);
  if (marked.has(state.items[state.selected]?.id)) {
    const next = state.items.findIndex((item, index) =>
      index > state.selected && !marked.has(item.id)
    );
    if (next >= 0) return select(next);
  }
}

/** Saves the export of the current filters (same records and CSV neutralisation as the CLI). */
async function download(format) {
  say(`exporting ${format}…`);
  try {
    const response = await fetch(`/api/export?${filterQuery({ format })}`, {
      credentials: "omit",
      headers: { authorization: `Bearer ${accessToken}` },
    });
    if (!response.ok) {
      const value = await response.json().catch(() => ({}));
      throw new Error(value.error ?? `HTTP ${response.status}`);
    }
    const blob = await response.blob();
    const url = URL.createObjectURL(blob);
    const stamp = new Date().toISOString().slice(0, 19).replaceAll(":", "");
    const link = el("a", { href: url, download: `beacon-export-${stamp}.${format}`, hidden: "" });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    say(`exported ${format} (${blob.size} bytes)`);
  } catch (error) {
    say(`Cannot export: ${error.message}`);
  }
}

function focusSearch() {
  filterPanel.open = true;
  filtersForm.elements.q.focus();
}

function drawKeys() {
  const legend = document.getElementById("legend");
  legend.replaceChildren(
    ...KEYS.map((entry) =>
      el("span", { class: "key", "data-key": entry.shown }, [
        el("kbd", {}, [entry.shown]),
        ` ${entry.label}`,
      ])
    ),
  );
  const rows = KEYS.map((entry) =>
    el("tr", {}, [
      el("td", {}, entry.keys.map((key) => el("kbd", {}, [key.replace("Arrow", "")]))),
      el("td", {}, [entry.label]),
    ])
  );
  const close = button("Close", () => helpDialog.close());
  helpDialog.replaceChildren(
    el("h2", {}, ["Keyboard"]),
    el("table", {}, rows),
    el("p", { class: "hint" }, [
      "With submissions selected (x or the check boxes), a status key marks all of them.",
    ]),
    close,
  );
}

function toggleHelp() {
  if (helpDialog.open) helpDialog.close();
  else helpDialog.showModal();
}

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

const narrow = matchMedia("(max-width: 759px)");
const keyActions = new Map(KEYS.flatMap((entry) => entry.keys.map((key) => [key, entry.run])));

/**
 * Keys run one after another, in the order pressed: most act at once, and one that must wait
 * (j past the last entry loaded waits for the next page) holds back the keys after it, so each
 * lands on the entry it was pressed on.
 */
let keys = Promise.resolve();

document.addEventListener("keydown", (event) => {
  const target = event.target;
  const typing = target.tagName === "TEXTAREA" || target.tagName === "SELECT" ||
    (target.tagName === "INPUT" && target.type !== "checkbox");
  if (typing || event.ctrlKey || event.metaKey || event.altKey) return;
  const action = keyActions.get(event.key);
  if (!action) return;
  event.preventDefault();
  if (helpDialog.open && event.key !== "?") {
    refuse(event.key, "close the list of keys first (? or Esc)");
    return;
  }
  if (accessToken === "") {
    refuse(event.key, "the console has no session in this tab");
    return;
  }
  const key = event.key;
  marks.keys++;
  drawPending();
  keys = keys.then(() => action(key)).catch((error) => refuse(key, error.message)).finally(() => {
    marks.keys--;
    drawPending();
  });
});

// Esc in the search box empties it, and the list with it: a box cleared over a list still
// filtered by the old words would show a filter that is no longer written anywhere.
filtersForm.elements.q.addEventListener("keydown", (event) => {
  if (event.key !== "Escape") return;
  event.preventDefault();
  const box = filtersForm.elements.q;
  if (box.value === "" && searchedFor === "") return;
  box.value = "";
  state.chosen.clear();
  reload();
});

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
openSession().then((session) => {
  accessToken = session.session;
  csrf = session.csrf;
  loadIntegrity();
  reload();
}, (error) => {
  itemView.replaceChildren(el("p", { class: "warning", id: "no-session" }, [error.message]));
  say(error.message);
});
