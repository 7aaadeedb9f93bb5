// The console's requests, all to its own origin (CSP connect-src 'self'), each carrying the
// session's credential as a header (never a cookie), and every POST its CSRF token.
import { authorization, sessionCsrf } from "./session.js";

/** A JSON view (GET) or, with a body, an action (POST); its answer, or an Error saying why not. */
export async function api(path, body) {
  const response = await fetch(
    path,
    body === undefined ? { credentials: "omit", headers: { authorization: authorization() } } : {
      method: "POST",
      credentials: "omit",
      headers: {
        authorization: authorization(),
        "content-type": "application/json",
        "x-csrf-token": sessionCsrf(),
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

/** The export of `query` (the filters and the format), as a Blob to save. */
export async function exportBlob(query) {
  const response = await fetch(`/api/export?${query}`, {
    credentials: "omit",
    headers: { authorization: authorization() },
  });
  if (!response.ok) {
    const value = await response.json().catch(() => ({}));
    throw new Error(value.error ?? `HTTP ${response.status}`);
  }
  return await response.blob();
}

/**
 * `load` run one call at a time: a call while it runs asks for one more run after the current one
 * (so the page ends on what the server says last) and gets the promise of the runs under way.
 * `load` says its own errors; the promise never rejects.
 */
export function oneAtATime(load) {
  let running = null;
  let again = false;
  return () => {
    if (running !== null) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await load();
      } while (again);
    })().finally(() => running = null);
    return running;
  };
}
