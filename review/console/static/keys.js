// The keyboard: one table of keys for what they run, the legend and the help, and the one
// listener that runs them in the order pressed.
import { hasSession } from "./session.js";
import { openNote } from "./item.js";
import { drawPending, mark, markChosen, marks } from "./marks.js";
import { move, reload, searchedFor, state, toggleChosen } from "./queue.js";
import { button, el, filterPanel, filtersForm, helpDialog, refuse, STATUSES } from "./page.js";

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

/** Opens the filters and puts the cursor in the search box. */
function focusSearch() {
  filterPanel.open = true;
  filtersForm.elements.q.focus();
}

/** The legend under the page and the list of keys in the help. */
export function drawKeys() {
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

export function toggleHelp() {
  if (helpDialog.open) helpDialog.close();
  else helpDialog.showModal();
}

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
  if (!hasSession()) {
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
