/**
 * Reads the Beacon's environment variables into options, the same way on every runtime (each
 * entry file passes its own way of reading a variable). Invalid values stop the start with a
 * message naming the variable, never a silently weaker configuration.
 *
 * | variable | meaning | default |
 * |---|---|---|
 * | `PORT` | TCP port to listen on (`0` picks a free one) | `8000` |
 * | `BEACON_HOSTNAME` | address to listen on (`HOSTNAME` is ignored: Docker sets it to the container id) | `0.0.0.0` |
 * | `BEACON_DATABASE_URL` | libSQL URL: `file:…`, `libsql://…`, `https://…` (`http://` for a local sqld) | `file:data/beacon.db` |
 * | `BEACON_DATABASE_AUTH_TOKEN` | Turso / sqld token | none |
 * | `BEACON_PUBLIC_URL` | public origin for documents and receipts | the listener's scheme and a valid `Host` |
 * | `BEACON_RATE_LIMIT` | `10/1m` syntax or `off`: submissions per source | `10/1m` |
 * | `BEACON_STATUS_RATE_LIMIT` | the same syntax: receipt reads (status, A2A requests) per source | `120/1m` |
 * | `BEACON_RATE_LIMIT_STORE` | `memory` (one process) or `database` (shared by instances) | `memory` |
 * | `BEACON_TRUSTED_PROXY_HEADER` | `x-forwarded-for` or `forwarded`, the one the proxies write | `x-forwarded-for` |
 * | `BEACON_TRUSTED_PROXIES` | reverse proxies whose forwarding headers count | `0` |
 * | `BEACON_SOURCE_SALT` | hex salt (≥ 16 bytes) for source hashes | stored in the database |
 * | `BEACON_SIGNING_KEY` | base64url Ed25519 seed (43 characters) that signs receipts and tree heads | a key file beside an embedded database; required for a remote one |
 * | `BEACON_SIGNING_KEY_FILE` | a file holding that seed, mode 0600 (docs/keys.md) | as above |
 * | `BEACON_PREVIOUS_SIGNING_KEYS` | comma-separated keys that signed the log before this one (base64url public keys, or seeds to co-sign the rotation): a start under a new key records a signed rotation statement and continues the log (docs/keys.md) | none |
 * | `BEACON_CHECKPOINT_INTERVAL` | `30s`, `5m`, `1h` (1 s to 24 h, lower case) or `off`: how often a tree head is signed while the log grows | `2s` |
 * | `BEACON_DATABASE_TIMEOUT_MS` | deadline of every database call, in ms (100 to 600000) | `10000` |
 * | `BEACON_BODY_TIMEOUT_MS` | how long a request body may take to arrive, in ms (100 to 600000); past it `408` | `10000` |
 * | `BEACON_WRITER_THREAD` | `on`: commit an embedded database on a Web Worker thread | `off` |
 * | `BEACON_WAL_LIMIT` | embedded database: the largest the write-ahead log grows, `512KiB` to `4GiB` (units `KiB`, `MiB`, `GiB`) | `80MiB` |
 * | `BEACON_LOG` | `on` (one JSON line per request) or `off` | `on` |
 * | `BEACON_METRICS_TOKEN` | bearer token for `GET /metrics` (16 to 512 characters of `A-Z a-z 0-9 - . _ ~ + /`); unset: no `/metrics` | unset |
 *
 * @module
 */
import { type Beacon, type BeaconOptions, createBeacon } from "../beacon.ts";
import { fromHex } from "../bytes.ts";
import {
  DEFAULT_DATABASE_URL,
  DEFAULT_RATE_LIMIT,
  DEFAULT_STATUS_RATE_LIMIT,
} from "../defaults.ts";
import { parseRateLimit } from "../limits/rate.ts";
import { parseSigningKey } from "../signing/key.ts";
import type { DatabaseConfig } from "../store/client.ts";
import { BAD_PORTS } from "./bad_ports.ts";
import { type ErrorLogger, errorLogger } from "./error_log.ts";

/** Every variable the Beacon reads (entries grant access to exactly these). */
export const ENVIRONMENT_VARIABLES = [
  "PORT",
  "BEACON_HOSTNAME",
  "BEACON_DATABASE_URL",
  "BEACON_DATABASE_AUTH_TOKEN",
  "BEACON_PUBLIC_URL",
  "BEACON_RATE_LIMIT",
  "BEACON_STATUS_RATE_LIMIT",
  "BEACON_RATE_LIMIT_STORE",
  "BEACON_TRUSTED_PROXIES",
  "BEACON_TRUSTED_PROXY_HEADER",
  "BEACON_SOURCE_SALT",
  "BEACON_SIGNING_KEY",
  "BEACON_SIGNING_KEY_FILE",
  "BEACON_PREVIOUS_SIGNING_KEYS",
  "BEACON_CHECKPOINT_INTERVAL",
  "BEACON_LOG",
  "BEACON_WRITER_THREAD",
  "BEACON_DATABASE_TIMEOUT_MS",
  "BEACON_BODY_TIMEOUT_MS",
  "BEACON_WAL_LIMIT",
  "BEACON_METRICS_TOKEN",
] as const;

/** The URL forms `BEACON_DATABASE_URL` accepts, as the refusal names them. */
const DATABASE_URL_FORMS = /^(file:|libsql:\/\/|https:\/\/|http:\/\/|:memory:$)/;

/**
 * A start-up refusal: the configuration or the environment cannot work. Entries print its one-line
 * message on stderr and exit with code 2 (src/start/serve.ts), never a stack trace.
 */
export class StartupError extends Error {
  /** `message` says what is wrong and what is expected. */
  constructor(message: string) {
    super(message);
    this.name = "StartupError";
  }
}

/** The resolved server configuration. */
export interface ServerConfig {
  readonly port: number;
  readonly hostname: string;
  readonly logRequests: boolean;
  readonly options: BeaconOptions;
  /** `BEACON_SIGNING_KEY_FILE`: the key file to read at start (src/start/server_key.ts). */
  readonly signingKeyFile?: string;
  /** Variables that were set and do nothing in this configuration (named once at start). */
  readonly ignored?: readonly string[];
}

/** Reads a variable; an empty value is unset. */
type Read = (name: string) => string | undefined;

/**
 * Reads one rate-limit variable (`BEACON_RATE_LIMIT`, `BEACON_STATUS_RATE_LIMIT`): `off`, or a
 * count of at least 1 per period in lower case, like `example`. Undefined when unset.
 */
function rateLimitVariable(
  name: string,
  text: string | undefined,
  example: string,
): BeaconOptions["rateLimit"] {
  if (text === undefined) return undefined;
  try {
    if (text !== text.toLowerCase()) throw new Error("upper case");
    // Spaces (NBSP included) are refused, never trimmed, as in every other variable.
    if (/\s/.test(text)) throw new Error("space");
    return parseRateLimit(text) ?? "off";
  } catch {
    throw new StartupError(
      `Cannot start: ${name} must be "off" or a count of at least 1 per period, like ` +
        `"${example}" (units s, m, h, d, in lower case)`,
    );
  }
}

/**
 * Whether `name` can be a listen address: an IPv4 address (each part 0 to 255), an IPv6 address
 * (bare or in brackets), or a host name (RFC 1123 §2.1 labels, not all digits, so a mistyped
 * address like `999.1.1.1` is refused rather than looked up).
 */
function isListenAddress(name: string): boolean {
  if (/^[0-9.]+$/.test(name)) {
    const parts = name.split(".");
    return parts.length === 4 && parts.every((part) => /^(0|[1-9][0-9]{0,2})$/.test(part)) &&
      parts.every((part) => Number(part) <= 255);
  }
  const bare = name.replace(/^\[(.*)\]$/, "$1");
  if (bare.includes(":")) return URL.canParse(`http://[${bare}]/`);
  return name.length <= 253 &&
    name.split(".").every((label) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i.test(label));
}

/**
 * Refuses a remote database URL the client could not use: one that does not parse, whose port
 * is out of range, or whose port `fetch` refuses to connect to. Nothing of the URL is quoted (its
 * userinfo or `authToken` may be a secret).
 */
function checkRemoteDatabaseUrl(url: string): void {
  if (!/^(libsql|https?):\/\//.test(url)) return;
  const parsed = URL.canParse(url.replace(/^libsql:/, "https:"))
    ? new URL(url.replace(/^libsql:/, "https:"))
    : undefined;
  if (parsed === undefined || parsed.hostname === "") {
    throw new StartupError(
      "Cannot start: BEACON_DATABASE_URL is not a valid URL: expected <scheme>://<host>[:<port " +
        "1-65535>][/path] (the URL itself is not shown: it may carry a credential)",
    );
  }
  // Fetch refuses a URL with userinfo (Fetch §5.3 "new Request", step 5.3) and the libSQL
  // protocol does not read one: the token has its own variable.
  if (parsed.username !== "" || parsed.password !== "") {
    throw new StartupError(
      "Cannot start: BEACON_DATABASE_URL must not carry a user name or password; put the " +
        "token in BEACON_DATABASE_AUTH_TOKEN (the URL itself is not shown)",
    );
  }
  checkDatabaseUrlParameters(url, parsed);
  if (parsed.port !== "" && BAD_PORTS.has(Number(parsed.port))) {
    throw new StartupError(
      `Cannot start: BEACON_DATABASE_URL names port ${parsed.port}, which fetch never connects ` +
        "to (a bad port of the Fetch standard, https://fetch.spec.whatwg.org/#bad-port); use " +
        "the database server's real port (sqld's default is 8080)",
    );
  }
}

/**
 * The query of a remote database URL, as `@libsql/client` reads it: only `tls` (`0` or `1`) and
 * `authToken`, each once; no fragment. Anything else would fail at every connection attempt
 * ("unrecognised error") while the server answers 503, so it stops the start instead. A
 * parameter's name is quoted only when it looks like a name; no value is ever quoted.
 */
function checkDatabaseUrlParameters(url: string, parsed: URL): void {
  const refuse = (what: string) => {
    throw new StartupError(
      `Cannot start: BEACON_DATABASE_URL ${what} (the URL itself is not shown: it may carry a ` +
        "credential)",
    );
  };
  if (url.includes("#")) refuse("must not have a fragment (#…)");
  const seen = new Set<string>();
  for (const [name] of parsed.searchParams) {
    const shown = /^[A-Za-z_][A-Za-z0-9_]{0,30}$/.test(name) ? `"${name}"` : "a parameter";
    if (name !== "tls" && name !== "authToken") {
      refuse(`has ${shown}, which the database client does not know: only tls=0|1 and authToken`);
    }
    if (seen.has(name)) refuse(`names ${shown} twice`);
    seen.add(name);
  }
  const tls = parsed.searchParams.get("tls");
  if (tls !== null && tls !== "0" && tls !== "1") refuse('has tls set to neither "0" nor "1"');
  if (url.startsWith("libsql:") && tls === "0" && parsed.port === "") {
    refuse("with tls=0 must name the port (libsql://host:8080?tls=0)");
  }
}

function integer(
  name: string,
  text: string,
  min: number,
  max: number,
  what = "an integer",
): number {
  if (!/^[0-9]{1,6}$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new StartupError(`Cannot start: ${name} must be ${what} from ${min} to ${max}`);
  }
  return Number(text);
}

/** One of `values`, exactly as written (lower case), or a refusal naming them. */
function oneOf<T extends string>(name: string, text: string, values: readonly T[]): T {
  if ((values as readonly string[]).includes(text)) return text as T;
  throw new StartupError(
    `Cannot start: ${name} must be ${values.map((value) => `"${value}"`).join(" or ")}`,
  );
}

const INTERVAL_UNITS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000 };

/** A deadline variable (`BEACON_DATABASE_TIMEOUT_MS`, `BEACON_BODY_TIMEOUT_MS`): whole ms, 100 to 600000. */
function deadlineMs(name: string, value: string): number {
  return integer(name, value, 100, 600_000, "milliseconds");
}

const SIZE_UNITS: Readonly<Record<string, number>> = { KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3 };

/**
 * `BEACON_WAL_LIMIT`: a whole number of `KiB`, `MiB` or `GiB` (IEC units, spelt so: `80MB` or
 * `80m` would leave the reader guessing) from 512 KiB, a few dozen commits' worth of pages, to
 * 4 GiB.
 */
function walLimitBytes(text: string): number {
  const match = /^([1-9][0-9]{0,6})(KiB|MiB|GiB)$/.exec(text);
  const bytes = match === null ? NaN : Number(match[1]) * SIZE_UNITS[match[2]];
  if (!(bytes >= 512 * 1024 && bytes <= 4 * 1024 ** 3)) {
    throw new StartupError(
      'Cannot start: BEACON_WAL_LIMIT must be a size from 512KiB to 4GiB like "4MiB" or ' +
        '"80MiB" (units KiB, MiB, GiB, spelt so)',
    );
  }
  return bytes;
}

/**
 * `BEACON_CHECKPOINT_INTERVAL`: `off`, or a whole number of `s`, `m` or `h` from 1 s to 24 h, in
 * lower case only (`5M` is refused: minutes or months?).
 */
function checkpointIntervalMs(text: string): number | "off" {
  if (text === "off") return "off";
  const match = /^([1-9][0-9]{0,5})([smh])$/.exec(text);
  const ms = match === null ? NaN : Number(match[1]) * INTERVAL_UNITS[match[2]];
  if (!(ms >= 1000 && ms <= 86_400_000)) {
    throw new StartupError(
      'Cannot start: BEACON_CHECKPOINT_INTERVAL must be "off" or a duration from 1s to 24h ' +
        'like "30s", "5m" or "1h" (units s, m, h, in lower case)',
    );
  }
  return ms;
}

/**
 * `BEACON_PUBLIC_URL`: an http(s) origin, with a path prefix where the Beacon is mounted under
 * one. A query, a fragment or credentials would be dropped from every published URL (only the
 * origin and path are used), so they are refused rather than trimmed without a word.
 */
function publicUrlVariable(text: string): string {
  // The URL parser drops tabs and newlines inside a URL without a word (WHATWG URL, "basic URL
  // parser"): the published URLs would differ from what was set.
  // deno-lint-ignore no-control-regex -- control characters are exactly what is refused
  if (/[\s\u0000-\u001f\u007f]/.test(text)) {
    throw new StartupError(
      "Cannot start: BEACON_PUBLIC_URL must not contain a space, tab, newline or control character",
    );
  }
  if (!URL.canParse(text) || !/^https?:$/.test(new URL(text).protocol)) {
    throw new StartupError("Cannot start: BEACON_PUBLIC_URL must be an http(s) URL");
  }
  const url = new URL(text);
  if (text.includes("?") || text.includes("#") || url.username !== "" || url.password !== "") {
    throw new StartupError(
      "Cannot start: BEACON_PUBLIC_URL must be an origin with at most a path, like " +
        '"https://beacon.example.com" or "https://example.com/beacon": no query, fragment, ' +
        "user name or password",
    );
  }
  return text;
}

/** The listener: `PORT`, `BEACON_HOSTNAME`, `BEACON_LOG`, and the origin it is known by. */
function listenerConfig(get: Read): Omit<ServerConfig, "options"> & { publicUrl?: string } {
  const log = oneOf("BEACON_LOG", get("BEACON_LOG") ?? "on", ["on", "off"] as const);
  const given = get("BEACON_HOSTNAME") ?? "0.0.0.0";
  // IPv6 bare or in brackets, as the configuration promises; every runtime listens on the bare
  // form (Node refuses `[::1]`), and the permission flags add the brackets they need.
  const hostname = given.replace(/^\[(.*:.*)\]$/, "$1");
  if (!isListenAddress(hostname)) {
    throw new StartupError(
      "Cannot start: BEACON_HOSTNAME must be an address of this machine: an IPv4 address " +
        "(0.0.0.0 for all, 127.0.0.1 for loopback), an IPv6 address (:: or ::1) or a host name",
    );
  }
  const publicUrl = get("BEACON_PUBLIC_URL");
  return {
    port: integer("PORT", get("PORT") ?? "8000", 0, 65535),
    hostname,
    logRequests: log === "on",
    ...(publicUrl === undefined ? {} : { publicUrl: publicUrlVariable(publicUrl) }),
  };
}

/**
 * The database: `BEACON_DATABASE_URL`, `BEACON_DATABASE_AUTH_TOKEN`, `BEACON_WRITER_THREAD`,
 * `BEACON_DATABASE_TIMEOUT_MS`, `BEACON_WAL_LIMIT`.
 */
function databaseConfig(get: Read): DatabaseConfig {
  const url = get("BEACON_DATABASE_URL") ?? DEFAULT_DATABASE_URL;
  if (!DATABASE_URL_FORMS.test(url)) {
    // Only the scheme is quoted: the rest of a URL may carry a token.
    const scheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:/.exec(url)?.[0] ?? "no scheme";
    throw new StartupError(
      "Cannot start: BEACON_DATABASE_URL must start with file: (embedded), libsql:// or " +
        `https:// (Turso, sqld), or http:// (a local sqld); it has ${scheme}`,
    );
  }
  if (url === "file:" || url === "file://") {
    throw new StartupError(
      "Cannot start: BEACON_DATABASE_URL names no file: give a path after file:, like " +
        `"${DEFAULT_DATABASE_URL}"`,
    );
  }
  if (url.startsWith("file:") && /[?#]/.test(url)) {
    // The embedded client reads the path only: `?mode=ro` or `?cache=…` would be dropped without
    // a word while the operator believes it applies.
    throw new StartupError(
      "Cannot start: BEACON_DATABASE_URL takes no parameters after a file: path (such as " +
        "?mode=…): the Beacon opens the file read-write with its own settings; give the path only",
    );
  }
  checkRemoteDatabaseUrl(url);
  const authToken = get("BEACON_DATABASE_AUTH_TOKEN");
  if (authToken !== undefined && !/^[\x21-\x7e]+$/.test(authToken)) {
    // An HTTP header value cannot carry a newline, and a space or an invisible character is a
    // copy-paste accident that would fail at every connection.
    throw new StartupError(
      "Cannot start: BEACON_DATABASE_AUTH_TOKEN must be printable ASCII with no space, tab or " +
        "newline (a JWT); the token itself is not shown",
    );
  }
  const writerThread = oneOf(
    "BEACON_WRITER_THREAD",
    get("BEACON_WRITER_THREAD") ?? "off",
    [
      "on",
      "off",
    ] as const,
  );
  const timeout = get("BEACON_DATABASE_TIMEOUT_MS");
  const walLimit = get("BEACON_WAL_LIMIT");
  return {
    url,
    ...(walLimit === undefined ? {} : { walLimitBytes: walLimitBytes(walLimit) }),
    authToken,
    ...(writerThread === "on" ? { writerThread: true } : {}),
    ...(timeout === undefined
      ? {}
      : { timeoutMs: deadlineMs("BEACON_DATABASE_TIMEOUT_MS", timeout) }),
  };
}

/**
 * What a client may spend and how it is identified: the rate limits, their store, the trusted
 * proxies, and how long a body may take.
 */
function limitsConfig(get: Read): BeaconOptions {
  const options: BeaconOptions = {};
  const rate = rateLimitVariable("BEACON_RATE_LIMIT", get("BEACON_RATE_LIMIT"), DEFAULT_RATE_LIMIT);
  if (rate !== undefined) options.rateLimit = rate;
  const statusRate = rateLimitVariable(
    "BEACON_STATUS_RATE_LIMIT",
    get("BEACON_STATUS_RATE_LIMIT"),
    DEFAULT_STATUS_RATE_LIMIT,
  );
  if (statusRate !== undefined) options.statusRateLimit = statusRate;
  const rateStore = get("BEACON_RATE_LIMIT_STORE");
  if (rateStore !== undefined) {
    options.rateLimitStore = oneOf(
      "BEACON_RATE_LIMIT_STORE",
      rateStore,
      [
        "memory",
        "database",
      ] as const,
    );
  }
  const proxies = get("BEACON_TRUSTED_PROXIES");
  if (proxies !== undefined) {
    options.trustedProxies = integer("BEACON_TRUSTED_PROXIES", proxies, 0, 10);
  }
  const proxyHeader = get("BEACON_TRUSTED_PROXY_HEADER")?.toLowerCase();
  if (proxyHeader !== undefined) {
    options.trustedProxyHeader = oneOf(
      "BEACON_TRUSTED_PROXY_HEADER",
      proxyHeader,
      [
        "x-forwarded-for",
        "forwarded",
      ] as const,
    );
  }
  const bodyTimeout = get("BEACON_BODY_TIMEOUT_MS");
  if (bodyTimeout !== undefined) {
    options.bodyTimeoutMs = deadlineMs("BEACON_BODY_TIMEOUT_MS", bodyTimeout);
  }
  return options;
}

/**
 * `BEACON_PREVIOUS_SIGNING_KEYS`: comma-separated base64url public keys or seeds (both 43
 * characters: which one an entry is shows when it is matched against the previous key,
 * src/transparency/key_rotation.ts). Each must decode to 32 bytes (or a seed's 48-byte PKCS#8
 * form); the refusal never repeats a value, which may be a private key.
 */
function previousSigningKeys(text: string): string[] {
  const entries = text.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "");
  entries.forEach((entry, i) => {
    try {
      parseSigningKey(entry, `BEACON_PREVIOUS_SIGNING_KEYS (entry ${i + 1})`);
    } catch (error) {
      throw new StartupError(
        `Cannot start: ${(error as Error).message.replace(/^Cannot use /, "")} (or a raw ` +
          "Ed25519 public key in the same form)",
      );
    }
  });
  return entries;
}

/**
 * The keys and what they sign: `BEACON_SOURCE_SALT`, `BEACON_SIGNING_KEY`,
 * `BEACON_SIGNING_KEY_FILE`, `BEACON_CHECKPOINT_INTERVAL`. A remote database without a key is
 * refused once it is reached and holds no key of an earlier version (`newSigningKey: "refuse"`):
 * a key made up and kept in a shared database would sign for whoever holds the database's token.
 */
function signingConfig(get: Read, databaseUrl: string): Pick<ServerConfig, "signingKeyFile"> & {
  options: BeaconOptions;
} {
  const options: BeaconOptions = {};
  const salt = get("BEACON_SOURCE_SALT");
  if (salt !== undefined) {
    const bytes = fromHex(salt);
    if (bytes === undefined || bytes.length < 16 || bytes.length > 64) {
      throw new StartupError("Cannot start: BEACON_SOURCE_SALT must be 32 to 128 hex digits");
    }
    options.sourceSalt = bytes;
  }
  const signingKey = get("BEACON_SIGNING_KEY");
  const signingKeyFile = get("BEACON_SIGNING_KEY_FILE");
  if (signingKey !== undefined && signingKeyFile !== undefined) {
    throw new StartupError(
      "Cannot start: BEACON_SIGNING_KEY and BEACON_SIGNING_KEY_FILE are both set; set one",
    );
  }
  const previous = get("BEACON_PREVIOUS_SIGNING_KEYS");
  if (previous !== undefined) options.previousSigningKeys = previousSigningKeys(previous);
  if (signingKey !== undefined) {
    try {
      options.signingKey = parseSigningKey(signingKey);
    } catch (error) {
      throw new StartupError(
        `Cannot start: ${(error as Error).message.replace(/^Cannot use /, "")}`,
      );
    }
  } else if (signingKeyFile === undefined && /^(libsql|https?):\/\//.test(databaseUrl)) {
    options.newSigningKey = "refuse";
  }
  const checkpointInterval = get("BEACON_CHECKPOINT_INTERVAL");
  if (checkpointInterval !== undefined) {
    options.checkpointIntervalMs = checkpointIntervalMs(checkpointInterval);
  }
  return { options, ...(signingKeyFile === undefined ? {} : { signingKeyFile }) };
}

/**
 * `BEACON_METRICS_TOKEN`: an RFC 6750 bearer token (token68 characters, so it travels in an
 * `Authorization` header as written), long enough not to be guessed. A space, a newline or any
 * other character would never match what a scraper sends, so it is refused, never trimmed.
 */
function metricsConfig(get: Read): BeaconOptions {
  const token = get("BEACON_METRICS_TOKEN");
  if (token === undefined) return {};
  if (!/^[A-Za-z0-9._~+/-]{16,512}=*$/.test(token)) {
    throw new StartupError(
      "Cannot start: BEACON_METRICS_TOKEN must be 16 to 512 characters of A-Z a-z 0-9 - . _ ~ " +
        "+ / (a bearer token; generate one with: openssl rand -hex 32); the value is not shown",
    );
  }
  return { metricsToken: token };
}

/**
 * Resolves the configuration from `read(name)`, group by group. Throws a
 * {@linkcode StartupError} whose message names the variable and the accepted values.
 */
export function configFromEnvironment(read: Read): ServerConfig {
  const get: Read = (name) => {
    const value = read(name);
    return value === undefined || value === "" ? undefined : value;
  };
  const database = databaseConfig(get);
  // Only an embedded file has a WAL to bound or commits to move to a thread.
  const ignored = database.url.startsWith("file:")
    ? []
    : ["BEACON_WAL_LIMIT", "BEACON_WRITER_THREAD"].filter((name) => get(name) !== undefined);
  const { publicUrl, ...listener } = listenerConfig(get);
  const signing = signingConfig(get, database.url);
  const options: BeaconOptions = {
    database,
    ...(publicUrl === undefined ? {} : { publicUrl }),
    ...limitsConfig(get),
    ...signing.options,
    ...metricsConfig(get),
  };
  return {
    ...listener,
    options,
    ...(signing.signingKeyFile === undefined ? {} : { signingKeyFile: signing.signingKeyFile }),
    ...(ignored.length === 0 ? {} : { ignored }),
  };
}

/**
 * The `publicUrl` field of the `listening` event: the configured origin, or what its absence
 * means. Without `BEACON_PUBLIC_URL` the origin in documents and receipts comes from each
 * request's (validated) `Host` header, which a client chooses, and the agent card is served
 * unsigned (src/documents.ts: a card is signed only for the configured origin).
 */
export function publicUrlFact(config: ServerConfig): string {
  return config.options.publicUrl ??
    "unset: documents and receipts name each request's Host, and the agent card is unsigned";
}

/** Each server Beacon's error log, so its shutdown writes the counts not yet written. */
const errorLogs = new WeakMap<Beacon, ErrorLogger>();

/**
 * Creates the Beacon a server entry runs: the configured options, one JSON log line per request on
 * stdout when logging is on, and unexpected errors on stderr with a time, a cause in fixed words
 * and a count (src/start/error_log.ts; never their message, which may quote data). It prints
 * nothing itself: the first line of a start is the `listening` event, or the one line of a
 * refusal.
 */
export function beaconForServer(config: ServerConfig, extra: BeaconOptions = {}): Beacon {
  const errors = errorLogger((line) => console.error(JSON.stringify(line)));
  const beacon = createBeacon({
    ...config.options,
    log: config.logRequests ? (entry) => console.log(JSON.stringify(entry)) : undefined,
    onError: (error) => errors.report(error),
    ...extra,
  });
  errorLogs.set(beacon, errors);
  return beacon;
}

/**
 * The last step of every server entry's shutdown, after it stopped accepting and in-flight
 * requests finished: close the database (the final head is signed there), write the error
 * counts not written yet, then print the one final JSON line, `{"event":"shutdown"}`. What the
 * server did is counted by its metrics (`BEACON_METRICS_TOKEN`), not here.
 */
export async function closeAndReport(beacon: Beacon): Promise<void> {
  await beacon.close();
  errorLogs.get(beacon)?.flush();
  console.log(JSON.stringify({ event: "shutdown" }));
}
