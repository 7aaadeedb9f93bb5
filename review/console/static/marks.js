// Marks: every status key or button queues a review event, recorded one at a time in the order
// pressed, the entry showing the status it will get until the answer.
import { api } from "./api.js";
import { select, showSelected } from "./item.js";
import { drawBulk, drawQueue, move, recount, redrawEntry, state } from "./queue.js";
import { refuse, say, statusBar } from "./page.js";

/**
 * The marks waiting to be recorded, in the order their keys were pressed, each with the id of
 * the entry it was pressed on. One is recorded at a time; the entry shows the status it will
 * get (`pending`) until the answer, and the counts change only then.
 */
export const marks = { waiting: [], pending: new Map(), running: false, keys: 0 };

export function drawPending() {
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

/** Records the waiting marks, one at a time, and says how each went. */
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

/**
 * A status key or button: marks the entry it was pressed on (the selection at that moment, or
 * for a button the item it sits beside), and moves on to the next at once, so the next key
 * lands on the entry now shown. The mark itself is queued and recorded in order.
 */
export function mark(status, key, id) {
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
export function markChosen(status, key) {
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
