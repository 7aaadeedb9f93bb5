// The console's session. The credential and its CSRF token live in this module's variables and
// nowhere else; api.js asks for them on each request.

// The page's CSRF token: it goes with the code's exchange only. Every later POST carries the
// token the exchange gave with the session, which no other client can make the console forget.
const pageCsrf = document.querySelector('meta[name="csrf-token"]').getAttribute("content");

// The link review serve prints carries a one-time code in its fragment, which no browser sends
// to a server but every browser keeps in its history. The page spends it at once: it posts it
// to /api/session for a session credential, kept only in this module's memory and sent only as
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

/** Opens the session: spends the link's code for the session credential and its CSRF token. */
export async function openSession() {
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
  accessToken = value.session;
  csrf = value.csrf;
}

// Kept in this module's memory only: never in storage, a cookie or the page's address.
let csrf = "";
let accessToken = "";

/** Whether this tab has a session (a reload or another tab has none). */
export function hasSession() {
  return accessToken !== "";
}

/** The `Authorization` header's value for an API call. */
export function authorization() {
  return `Bearer ${accessToken}`;
}

/** The session's CSRF token, for every POST after the exchange. */
export function sessionCsrf() {
  return csrf;
}
