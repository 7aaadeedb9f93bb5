// The console page's elements and the helpers every module draws with. Submitted text goes into
// the page through text nodes only (el, segmentLine, inline): nothing is ever parsed as markup.
// This module imports nothing, so the others may use what it defines as they load.

export const queueList = document.getElementById("queue");
export const itemView = document.getElementById("item");
export const statusBar = document.getElementById("status");
export const filtersForm = document.getElementById("filters");
export const filterPanel = document.getElementById("filter-panel");
export const moreButton = document.getElementById("more");
export const bulkBar = document.getElementById("bulk");
export const helpDialog = document.getElementById("help");

/** Whether the page is in one column (a phone): the item pane then sits below the queue. */
export const narrow = matchMedia("(max-width: 759px)");

/** The statuses, each with its key and button (one table for keys, buttons, legend, help). */
export const STATUSES = [
  { status: "reviewed", key: "r", label: "Mark reviewed", short: "reviewed" },
  { status: "follow-up", key: "f", label: "Mark for follow-up", short: "follow-up" },
  { status: "dismissed", key: "d", label: "Mark dismissed", short: "dismissed" },
  { status: "escalated", key: "e", label: "Mark escalated", short: "escalated" },
  { status: "new", key: "u", label: "Back to new", short: "back to new" },
];

/** An element with attributes and children (strings become text nodes). */
export function el(tag, attributes = {}, children = []) {
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
export function segmentLine(segments) {
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

/** Lines of segments in one block. */
export function segmentLines(lines, className) {
  const block = el("div", { class: className });
  for (const line of lines) block.append(segmentLine(line));
  return block;
}

/** A line of segments inside running text. */
export function inline(segments) {
  const span = el("span", { class: "t", dir: "ltr" });
  for (const segment of segments ?? []) {
    const part = el("span", { class: segment.kind === "escape" ? "esc" : "t" });
    part.textContent = segment.text;
    span.append(part);
  }
  return span;
}

/** Says what happened, in the status bar. */
export function say(text) {
  statusBar.textContent = text;
}

/** What look-alike words read as (their UTS #39 skeletons, as the search folds them). */
export function readsAsLine(words) {
  const line = el("div", { class: "reads-as" }, ["reads as: "]);
  words.forEach((word, i) => {
    if (i > 0) line.append(", ");
    line.append(inline(word));
  });
  return line;
}

/** A status, as a coloured label. */
export function chip(status) {
  return el("span", { class: `chip status-${status}` }, [status]);
}

/** A button, with the key that does the same shown beside its label. */
export function button(label, action, key, attributes = {}) {
  const node = el("button", { type: "button", "aria-keyshortcuts": key, ...attributes }, [label]);
  if (key) node.append(" ", el("kbd", { "aria-hidden": "true" }, [key]));
  node.addEventListener("click", action);
  return node;
}

/** Says that a key did nothing, and why: no key is ever dropped without a word. */
export function refuse(key, why) {
  say(`${key}: ${why}`);
  statusBar.classList.add("refused");
}
