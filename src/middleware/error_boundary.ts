/**
 * The last line of the error mapping: anything thrown below becomes a native error response
 * through {@linkcode responseForError}, which never exposes an unknown error's message or stack.
 * The error itself goes to the operator's `onError` hook (for logs), never to the client.
 *
 * @module
 */
import { codeForError, responseForError } from "../errors.ts";
import type { Middleware } from "./compose.ts";

/** Catches everything thrown further down the chain. */
export function errorBoundary(onError: ((error: unknown) => void) | undefined): Middleware {
  return async (context, next) => {
    try {
      return await next();
    } catch (error) {
      context.log.outcome = "failed";
      context.log.code = codeForError(error);
      try {
        onError?.(error);
      } catch {
        // A failing log hook must not turn a mapped error into an unmapped one.
      }
      return responseForError(error);
    }
  };
}
