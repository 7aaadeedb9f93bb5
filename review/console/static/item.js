// The item pane: one submission in full (fields, content, history, integrity), its note editor,
// and which entry of the queue it shows.
import { api, oneAtATime } from "./api.js";
import { mark } from "./marks.js";
import { move, recount, state } from "./queue.js";
import {
  button,
  chip,
  el,
  inline,
  itemView,
  queueList,
  readsAsLine,
  refuse,
  say,
  segmentLines,
  STATUSES,
} from "./page.js";

/** The history, each note corrected by a later one struck through. */
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

/** The item's toolbar: previous, next, a button a status, and a note. */
function itemActions(item) {
  return el("div", { class: "actions", role: "toolbar", "aria-label": "Actions" }, [
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
}

/** The receipt's fields, each value as inert segments. */
function receiptFields(item) {
  const fields = el("dl", { class: "fields" });
  for (const field of item.fields) {
    fields.append(el("dt", {}, [field.label]), el("dd", {}, [segmentLines(field.value, "value")]));
  }
  return fields;
}

/** The digest's state and what the stored receipt signature proves. */
function integrityFields(item) {
  return el("dl", { class: "fields" }, [
    el("dt", {}, ["digest"]),
    el("dd", {}, [item.integrity.digest]),
    el("dt", {}, ["receipt"]),
    el("dd", {}, [
      item.integrity.signatureReport +
      (item.integrity.signature === null ? "" : ` (signature ${item.integrity.signature})`),
    ]),
  ]);
}

/** Draws the submission in the item pane. */
function drawItem(item) {
  // A note being written stays, with its focus, when the same item is drawn again (after a
  // mark of it was recorded).
  const writing = document.getElementById("note-area");
  const keepNote = writing !== null && writing.childElementCount > 0 &&
    itemView.dataset.id === item.id;
  const focused = document.activeElement;
  const title = el("div", { class: "item-title" }, [
    el("h2", {}, [`Submission ${item.id}`]),
    chip(item.status),
  ]);
  const children = [title, itemActions(item)];
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
    receiptFields(item),
    el("h3", {}, ["Integrity"]),
    integrityFields(item),
  );
  itemView.replaceChildren(...children);
  itemView.dataset.id = item.id;
  if (keepNote && writing.contains(focused)) focused.focus();
}

/** The note editor, for a new note or a correction of note `number`. */
export function openNote(supersedes, number) {
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
export function select(index) {
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

/** The selected submission read into the item pane; one request at a time, as `recount`. */
const loadSelected = oneAtATime(async () => {
  const entry = state.items[state.selected];
  if (!entry) return;
  try {
    const item = await api(`/api/item?id=${encodeURIComponent(entry.id)}`);
    if (state.items[state.selected]?.id === item.id) {
      state.item = item;
      drawItem(item);
    }
  } catch (error) {
    say(`Cannot load the submission: ${error.message}`);
  }
});

export function showSelected() {
  itemView.setAttribute("aria-busy", "true");
  const loading = loadSelected();
  // Every caller's handler runs when the shared runs end: the pane is busy until then.
  loading.finally(() => itemView.removeAttribute("aria-busy"));
  return loading;
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
