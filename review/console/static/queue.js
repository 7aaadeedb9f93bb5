// The queue: what the page holds (state), the list of entries, paging, the bulk selection, the
// counts and the export of what the filters match.
import { api, exportBlob, oneAtATime } from "./api.js";
import { markChosen } from "./marks.js";
import { select } from "./item.js";
import {
  bulkBar,
  button,
  chip,
  el,
  filtersForm,
  inline,
  itemView,
  moreButton,
  narrow,
  queueList,
  readsAsLine,
  refuse,
  say,
  STATUSES,
} from "./page.js";

/**
 * What the page holds. `ids` mirrors `items` so a page that overlaps what is shown (an item
 * marked since moved from the new phase of the queue to the done phase) adds nothing twice.
 * `chosen` is the bulk selection, by id. `generation` grows with each fresh load of the queue,
 * so an answer to an older request is dropped; `loading` is the one page load in flight, which
 * every caller shares; `view` numbers item requests. Marks wait in `marks` (below).
 */
export const state = {
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

/** The filters in the form, and `extra`, as a query string. */
export function filterQuery(extra = {}) {
  const params = new URLSearchParams();
  for (const [name, value] of new FormData(filtersForm)) {
    if (String(value).trim() !== "") params.set(name, String(value).trim());
  }
  for (const [name, value] of Object.entries(extra)) {
    if (value !== null && value !== undefined) params.set(name, value);
  }
  return params.toString();
}

/** One entry of the queue list, with its check box. */
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

/** Draws one entry again, after its status or selection changed. */
export function redrawEntry(index) {
  const old = queueList.children[index];
  if (old) old.replaceWith(queueEntry(state.items[index], index));
}

/** Draws the whole list again. */
export function drawQueue() {
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

/** The bulk bar: one button a status for every selected entry. */
export function drawBulk() {
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

export function toggleChosen(index) {
  const item = state.items[index];
  if (!item) return;
  if (state.chosen.has(item.id)) state.chosen.delete(item.id);
  else state.chosen.add(item.id);
  redrawEntry(index);
  drawBulk();
}

export function selectAllShown() {
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

/** A page of the queue: the first (the list drawn again) or the next (appended). */
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
export function loadMore() {
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
export let searchedFor = "";

/** The queue from its start, for the filters in the form; older answers are dropped. */
export function reload() {
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

/** The counts in the header and under the list. */
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

/** The counts read again; one request at a time, and one more if asked for meanwhile. */
export const recount = oneAtATime(refreshCounts);

/** Moves the selection by `step`, loading the next page when it passes the last entry. */
export async function move(step, key) {
  const target = state.selected + step;
  if (target >= state.items.length && state.next !== null) await loadMore();
  if (target >= 0 && target < state.items.length) return select(target);
  if (key !== undefined) {
    refuse(key, step > 0 ? "this is the last submission shown" : "this is the first submission");
  }
}

/** Saves the export of the current filters (same records and CSV neutralisation as the CLI). */
export async function download(format) {
  say(`exporting ${format}…`);
  try {
    const blob = await exportBlob(filterQuery({ format }));
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
