/**
 * Why the database could not be reached, opened or written, classified once for everyone who says
 * so: in a few fixed words for the operator's log lines and the start-up refusals
 * ({@linkcode describeDatabaseError}: "connection refused", "timeout", "DNS failure", "HTTP status
 * 401", "permission denied", …), and as a short key for the `beacon_database_errors_total` metric
 * ({@linkcode databaseErrorKey}: `refused`, `timeout`, `dns`, `http_401`, `sqlite_busy`, …). One
 * classification, so a metric and the log line of the same error never name different causes.
 *
 * The words are chosen from the error's codes and texts along its `cause` chain, but the output
 * is only ever one of the phrases below (and an HTTP status number): an error's own message may
 * quote the database URL with its userinfo or `authToken`, or a row's content, and none of it is
 * ever printed.
 *
 * @module
 */

/** One recognisable cause: codes (`error.code`, Node's and Bun's), texts (Deno's, libSQL's). */
interface Cause {
  readonly words: string;
  /** The metric's key; a cause matched by an SQLite code is keyed by that code instead. */
  readonly key: string;
  readonly codes: readonly string[];
  readonly text?: RegExp;
}

/** Most specific first: a TLS failure is also a "connect" error, a timeout may mention a host. */
const CAUSES: readonly Cause[] = [
  {
    words: "DNS failure (the database host name does not resolve)",
    key: "dns",
    codes: ["ENOTFOUND", "EAI_AGAIN", "EAI_NONAME", "DNSException"],
    text: /dns error|failed to lookup address|name or service not known|name resolution/i,
  },
  {
    words: "TLS failure (the database did not complete a valid TLS handshake)",
    key: "tls",
    codes: [
      "ERR_SSL_WRONG_VERSION_NUMBER",
      "EPROTO",
      "DEPTH_ZERO_SELF_SIGNED_CERT",
      "SELF_SIGNED_CERT_IN_CHAIN",
      "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      "CERT_HAS_EXPIRED",
      "ERR_TLS_CERT_ALTNAME_INVALID",
    ],
    text: /\btls\b|\bssl\b|certificate|InvalidContentType|handshake/i,
  },
  {
    words: "connection refused (nothing listens at the database address)",
    key: "refused",
    codes: ["ECONNREFUSED", "ConnectionRefused"],
    text: /connection refused/i,
  },
  {
    words: "connection reset by the database",
    // UND_ERR_SOCKET: Node's fetch (undici) when the peer closed or reset mid-request.
    key: "reset",
    codes: ["ECONNRESET", "EPIPE", "ConnectionReset", "ConnectionClosed", "UND_ERR_SOCKET"],
    text: /connection reset|connection closed|broken pipe|other side closed/i,
  },
  {
    words: "network unreachable (no route to the database host)",
    key: "unreachable",
    codes: ["EHOSTUNREACH", "ENETUNREACH", "ENETDOWN"],
    text: /unreachable/i,
  },
  {
    words: "timeout (the database did not answer within the deadline)",
    key: "timeout",
    codes: ["ETIMEDOUT", "UND_ERR_CONNECT_TIMEOUT", "Timeout", "TimeoutError", "DeadlineError"],
    text: /timed out|deadline|timeout/i,
  },
  {
    words: "out of file descriptors (EMFILE/ENFILE: raise the limit, or cap connections in front)",
    key: "descriptors",
    codes: ["EMFILE", "ENFILE"],
    text: /too many open files/i,
  },
  {
    words: "permission denied",
    key: "permission",
    codes: ["EACCES", "EPERM", "PermissionDenied"],
    text: /permission denied|access denied|requires (read|write|ffi|net) access/i,
  },
  {
    words: "read-only file system",
    key: "read_only",
    codes: ["EROFS"],
    text: /read-only file system/i,
  },
  {
    words: "no space left on the device",
    key: "disk_full",
    codes: ["ENOSPC", "SQLITE_FULL"],
    text: /no space left|database or disk is full/i,
  },
  {
    words: "no such file or directory",
    key: "no_file",
    codes: ["ENOENT", "NotFound"],
    text: /no such file or directory/i,
  },
  {
    // mkdir -p of a folder where a file is: Node and Deno say EEXIST.
    words: "a part of the path is not a directory",
    key: "not_directory",
    codes: ["ENOTDIR", "EEXIST"],
    text: /not a directory/i,
  },
  {
    words: "the path is a directory",
    key: "is_directory",
    codes: ["EISDIR", "IsADirectory"],
    text: /is a directory/i,
  },
  {
    words: "the file is not a database",
    key: "sqlite_notadb",
    codes: ["SQLITE_NOTADB", "SQLITE_CORRUPT"],
    text: /not a database|malformed/i,
  },
  {
    words: "the database is locked by another connection",
    key: "sqlite_busy",
    codes: ["SQLITE_BUSY", "SQLITE_LOCKED"],
    text: /database is locked|SQLITE_BUSY/i,
  },
  {
    // libSQL's own open failure ends in SQLite's code: "Unable to open connection …: 14".
    words: "the database file cannot be opened (out of file descriptors, no permission, or " +
      "the folder is gone)",
    key: "sqlite_cantopen",
    codes: ["SQLITE_CANTOPEN"],
    text: /unable to open|cannot open/i,
  },
  {
    // Last: a reset or a refusal on the same chain says more.
    words: "no answer to a commit that was sent (its deadline passed, or the connection broke " +
      "after it left): its outcome is unknown",
    key: "no_answer",
    codes: ["IndeterminateError"],
  },
];

/** The errors along `error`'s `cause` chain (at most 8, for a cycle). */
function chain(error: unknown): unknown[] {
  const errors: unknown[] = [];
  for (let e = error; e !== undefined && e !== null && errors.length < 8; e = cause(e)) {
    errors.push(e);
  }
  return errors;
}

function cause(error: unknown): unknown {
  return typeof error === "object" ? (error as { cause?: unknown }).cause : undefined;
}

function field(error: unknown, name: string): unknown {
  return typeof error === "object" && error !== null
    ? (error as Record<string, unknown>)[name]
    : undefined;
}

/** Deno's permission kinds, as its `NotCapable` message names them ("Requires write access"). */
const DENO_PERMISSIONS = ["read", "write", "ffi", "env", "net", "sys", "run", "import"] as const;

/**
 * The Deno permission that refused, from a `NotCapable` error: "Requires write access to …, run
 * again with the --allow-write flag". Deno refuses /proc, /sys and /dev paths without
 * `--allow-all` whatever else is granted ("Requires all access"). Only the kind is read from the
 * message, never the path it quotes.
 */
function denoPermission(errors: readonly unknown[]): string | undefined {
  for (const error of errors) {
    if (field(error, "name") !== "NotCapable") continue;
    const kind = /\bRequires ([a-z]+) access\b/.exec(String(field(error, "message") ?? ""))?.[1];
    if (kind === "all") {
      return "not permitted by the server's Deno permissions (a special path such as /proc or " +
        "/dev needs --allow-all)";
    }
    const known = DENO_PERMISSIONS.find((name) => name === kind);
    return known === undefined
      ? "not permitted by the server's Deno permissions"
      : `not permitted by the server's Deno permissions (${known} access is not granted: ` +
        `--allow-${known})`;
  }
  return undefined;
}

/** The HTTP status a remote database answered with, when that is what failed. */
function httpStatus(errors: readonly unknown[]): number | undefined {
  for (const error of errors) {
    const status = field(error, "status");
    if (typeof status === "number" && status >= 100 && status <= 599) return status;
    const match = /HTTP status (\d{3})\b/.exec(String(field(error, "message") ?? ""));
    if (match !== null) return Number(match[1]);
  }
  return undefined;
}

/** What one classification says: the words for a log line and the key for the metric. */
interface Classified {
  readonly words: string;
  readonly key: string;
}

/** The one classification behind {@linkcode describeDatabaseError} and {@linkcode databaseErrorKey}. */
function classify(error: unknown): Classified {
  const errors = chain(error);
  const denied = denoPermission(errors);
  if (denied !== undefined) return { words: denied, key: "permission" };
  const status = httpStatus(errors);
  if (status !== undefined) {
    const meaning = status === 401 || status === 403
      ? " (check BEACON_DATABASE_AUTH_TOKEN)"
      : status === 404
      ? " (check the database URL's host and path)"
      : "";
    return { words: `HTTP status ${status} from the database${meaning}`, key: `http_${status}` };
  }
  const codes = errors.flatMap((e) => [field(e, "code"), field(e, "name")]).map(String);
  // URLs out first: a host may be called `tls.example` or `timeout.example`.
  const texts = errors.map((e) => String(field(e, "message") ?? "")).join("\n")
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s)]*/gi, "");
  for (const candidate of CAUSES) {
    const code = candidate.codes.find((code) => codes.includes(code));
    if (code !== undefined) {
      const key = code.startsWith("SQLITE_") ? code.toLowerCase() : candidate.key;
      return { words: candidate.words, key };
    }
  }
  for (const candidate of CAUSES) {
    if (candidate.text?.test(texts)) return { words: candidate.words, key: candidate.key };
  }
  const name = field(errors[errors.length - 1], "name");
  const named = typeof name === "string" && /^[A-Za-z][A-Za-z0-9]{0,39}$/.test(name);
  // An SQLite code no cause above names still says more than "other".
  const sqlite = codes.find((code) => /^SQLITE_[A-Z_]{1,30}$/.test(code));
  return {
    words: `unrecognised error (${named ? name : "unknown"})`,
    key: sqlite?.toLowerCase() ?? "other",
  };
}

/**
 * A few words that say why the database failed, never quoting the error's own text. An error
 * nothing here recognises is named by its class: `unrecognised error (TypeError)`.
 */
export function describeDatabaseError(error: unknown): string {
  return classify(error).words;
}

/**
 * The short, bounded key of the same cause, for a metric's label: one of the causes' keys
 * (`refused`, `timeout`, `reset`, `dns`, `tls`, `unreachable`, `descriptors`, `permission`,
 * `read_only`, `disk_full`, `no_file`, `not_directory`, `is_directory`, `no_answer`),
 * `http_<status>`, `sqlite_<code>`, or `other`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { databaseErrorKey } from "./database_error.ts";
 *
 * assert.equal(databaseErrorKey(new Error("x", { cause: { code: "ECONNREFUSED" } })), "refused");
 * assert.equal(databaseErrorKey({ code: "SQLITE_BUSY" }), "sqlite_busy");
 * assert.equal(databaseErrorKey(new TypeError("x")), "other");
 * ```
 */
export function databaseErrorKey(error: unknown): string {
  return classify(error).key;
}
