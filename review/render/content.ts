/**
 * What a stored submission holds, for display: a beacon/0.1 message (native structured, or the
 * data part of an A2A message), an A2A message with text parts, plain text, other JSON, or
 * bytes that are not UTF-8. Nothing here trusts the content: JSON that does not parse, fields
 * of the wrong type and unknown members all fall back to showing what is there, through the
 * safe renderer (mod.ts). Every line of submitted text is prefixed with `| ` (and a line
 * wrapped to fit the width continues with `: `), so content can never pass itself off as the
 * tool's own output.
 *
 * @module
 */
import { decodeUtf8Strict, isJsonObject } from "../../src/message/mod.ts";
import { Findings, safeSegments, safeText, type Segment } from "./mod.ts";

/** The labelled fields of a beacon/0.1 message, as far as they are strings. */
export interface MessageView {
  /** One-line summary. */
  readonly subject?: string;
  /** The message text. */
  readonly body?: string;
  /** What the sender means it as. */
  readonly intent?: string;
  /** BCP 47 language tag. */
  readonly language?: string;
  /** The sender's self-description (unchecked). */
  readonly sender: {
    readonly name?: string;
    readonly description?: string;
    readonly software?: string;
    readonly operator?: string;
  };
  /** The claimed signing key, if the message is signed. */
  readonly identity?: { readonly algorithm?: string; readonly publicKey?: string };
  /** Members the format does not define (a valid message has none). */
  readonly extra: Record<string, unknown>;
  /** The parsed message itself. */
  readonly raw: Record<string, unknown>;
}

/** One part of an A2A message. */
export type PartView =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "message"; readonly message: MessageView }
  | { readonly type: "other"; readonly value: unknown };

/** The interpreted content of a submission. */
export type ContentView =
  | { readonly form: "message"; readonly message: MessageView }
  | {
    readonly form: "a2a";
    readonly messageId?: string;
    readonly role?: string;
    readonly parts: readonly PartView[];
    readonly extra: Record<string, unknown>;
  }
  | { readonly form: "text"; readonly text: string }
  | { readonly form: "json"; readonly value: unknown }
  | { readonly form: "binary"; readonly size: number };

function str(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}

const MESSAGE_MEMBERS = new Set([
  "beacon",
  "subject",
  "body",
  "intent",
  "sender",
  "language",
  "identity",
]);

function asMessage(value: unknown): MessageView | undefined {
  if (!isJsonObject(value) || value.beacon === undefined || typeof value.subject !== "string") {
    return undefined;
  }
  const sender = isJsonObject(value.sender) ? value.sender : {};
  const identity = isJsonObject(value.identity) ? value.identity : undefined;
  const extra: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value)) {
    if (!MESSAGE_MEMBERS.has(name)) extra[name] = member;
  }
  return {
    subject: str(value.subject),
    body: str(value.body),
    intent: str(value.intent),
    language: str(value.language),
    sender: {
      name: str(sender.name),
      description: str(sender.description),
      software: str(sender.software),
      operator: str(sender.operator),
    },
    identity: identity === undefined
      ? undefined
      : { algorithm: str(identity.algorithm), publicKey: str(identity.publicKey) },
    extra,
    raw: value,
  };
}

/**
 * Interprets stored content.
 *
 * @param contentType The stored media type.
 * @param content The stored bytes.
 * @returns The view.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { interpretContent } from "./content.ts";
 *
 * assert.equal(interpretContent("text/plain; charset=utf-8", new TextEncoder().encode("hi")).form, "text");
 * ```
 */
export function interpretContent(contentType: string, content: Uint8Array): ContentView {
  const text = decodeUtf8Strict(content);
  if (text === undefined) return { form: "binary", size: content.length };
  const essence = contentType.split(";")[0].trim().toLowerCase();
  if (essence !== "application/json" && !essence.endsWith("+json")) return { form: "text", text };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { form: "text", text };
  }
  const message = asMessage(value);
  if (message !== undefined) return { form: "message", message };
  if (isJsonObject(value) && Array.isArray(value.parts)) {
    const parts: PartView[] = value.parts.map((part): PartView => {
      if (isJsonObject(part) && typeof part.text === "string") {
        return { type: "text", text: part.text };
      }
      const inner = isJsonObject(part) ? asMessage(part.data) : undefined;
      if (inner !== undefined) return { type: "message", message: inner };
      return { type: "other", value: part };
    });
    const extra: Record<string, unknown> = {};
    for (const [name, member] of Object.entries(value)) {
      if (name !== "parts" && name !== "messageId" && name !== "role") extra[name] = member;
    }
    return { form: "a2a", messageId: str(value.messageId), role: str(value.role), parts, extra };
  }
  return { form: "json", value };
}

/**
 * The subject, or the first words of the text, for one-line listings (unrendered).
 *
 * @param view The interpreted content.
 * @returns Untrusted text; render it with `safeText`.
 */
export function previewOf(view: ContentView): string {
  switch (view.form) {
    case "message":
      return view.message.subject ?? "";
    case "a2a": {
      for (const part of view.parts) {
        if (part.type === "message") return part.message.subject ?? "";
        if (part.type === "text") return part.text.slice(0, 400);
      }
      return "(A2A message without text)";
    }
    case "text":
      return view.text.slice(0, 400);
    case "json":
      return JSON.stringify(view.value).slice(0, 400);
    case "binary":
      return `(${view.size} bytes, not UTF-8)`;
  }
}

/** Rendered content: safe lines and what was escaped. */
export interface RenderedContent {
  /** Safe output lines, without line feeds. */
  readonly lines: string[];
  /** The same lines as segments, for the web console. */
  readonly segments: Segment[][];
  /** What was escaped or defanged. */
  readonly findings: Findings;
}

const LABEL_WIDTH = 12;

class Renderer {
  readonly segments: Segment[][] = [];
  readonly findings = new Findings();
  readonly #width: number;

  constructor(width: number) {
    this.#width = width;
  }

  /** One line of the tool's own text (labels and safe, rendered text). */
  own(text: string): void {
    this.segments.push([{ text, kind: "prefix" }]);
  }

  /** A label with a one-line value: line feeds are shown as `\n`, long values wrap. */
  field(label: string, value: string | undefined, indent = ""): void {
    if (value === undefined) return;
    const head = indent + label.padEnd(LABEL_WIDTH - indent.length) + "  ";
    this.segments.push(
      ...safeSegments(value, this.findings, {
        width: this.#width,
        indent: head,
        continuation: " ".repeat(head.length),
        newlines: "escape",
      }),
    );
  }

  /** A label on its own line, then multi-line text, every line prefixed with `| `. */
  block(label: string, value: string | undefined, indent = ""): void {
    if (value === undefined) return;
    this.own(indent + label);
    this.segments.push(
      ...safeSegments(value, this.findings, {
        width: this.#width,
        indent: indent + "  | ",
        continuation: indent + "  : ",
      }),
    );
  }

  /** Any JSON value as an indented tree of labelled lines; strings rendered safely. */
  json(label: string, value: unknown, indent = "", depth = 0): void {
    if (depth > 16) {
      this.own(indent + safeText(label, this.findings) + ": …");
      return;
    }
    if (isJsonObject(value) || Array.isArray(value)) {
      const entries = Array.isArray(value)
        ? value.map((item, i): [string, unknown] => [`[${i}]`, item])
        : Object.entries(value);
      this.own(
        indent + safeText(label, this.findings) + (entries.length === 0 ? ": (empty)" : ":"),
      );
      for (const [name, member] of entries) this.json(name, member, indent + "  ", depth + 1);
      return;
    }
    const head = indent + safeText(label, this.findings) + ": ";
    const text = typeof value === "string" ? value : JSON.stringify(value) ?? String(value);
    this.segments.push(
      ...safeSegments(text, this.findings, {
        width: this.#width,
        indent: head,
        continuation: indent + "  : ",
        newlines: "keep",
      }),
    );
  }

  message(message: MessageView, indent = ""): void {
    this.field("subject", message.subject, indent);
    this.field("intent", message.intent, indent);
    this.field("language", message.language, indent);
    this.own(indent + "sender");
    const inner = indent + "  ";
    this.field("name", message.sender.name, inner);
    this.block("description", message.sender.description, inner);
    this.field("software", message.sender.software, inner);
    this.field("operator", message.sender.operator, inner);
    if (message.identity !== undefined) {
      this.field(
        "identity",
        `${message.identity.algorithm ?? "?"} public key ${message.identity.publicKey ?? "?"}`,
        indent,
      );
    }
    for (const [name, value] of Object.entries(message.extra)) {
      this.json(`unexpected member ${name}`, value, indent);
    }
    this.block("body", message.body, indent);
  }
}

/**
 * Renders interpreted content as safe, wrapped, labelled lines.
 *
 * @param view The interpreted content.
 * @param width Columns per line.
 * @returns The lines and the findings.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { interpretContent, renderContent } from "./content.ts";
 *
 * const view = interpretContent("text/plain", new TextEncoder().encode("a\u202Eb"));
 * assert.equal(renderContent(view, 100).findings.summary(), "warning: 1 bidi control shown escaped");
 * ```
 */
export function renderContent(view: ContentView, width: number): RenderedContent {
  const out = new Renderer(width);
  switch (view.form) {
    case "message":
      out.message(view.message);
      break;
    case "a2a":
      out.field("message id", view.messageId);
      out.field("role", view.role);
      view.parts.forEach((part, i) => {
        if (part.type === "text") out.block(`part ${i + 1} (text)`, part.text);
        else if (part.type === "message") {
          out.own(`part ${i + 1} (beacon/0.1 message)`);
          out.message(part.message, "  ");
        } else out.json(`part ${i + 1} (other)`, part.value);
      });
      for (const [name, value] of Object.entries(view.extra)) out.json(name, value);
      break;
    case "text":
      out.block("text", view.text);
      break;
    case "json":
      out.json("json", view.value);
      break;
    case "binary":
      out.own(`(${view.size} bytes that are not UTF-8; use export to get them as base64)`);
      break;
  }
  return {
    lines: out.segments.map((line) => line.map((segment) => segment.text).join("")),
    segments: out.segments,
    findings: out.findings,
  };
}

/**
 * The native message a submission holds, directly or as an A2A message's data part, if any.
 *
 * @param view What the content holds ({@linkcode interpretContent}).
 * @returns The message, or undefined.
 */
export function messageOf(view: ContentView): MessageView | undefined {
  if (view.form === "message") return view.message;
  if (view.form === "a2a") {
    for (const part of view.parts) if (part.type === "message") return part.message;
  }
  return undefined;
}
