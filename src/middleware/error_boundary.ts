/**
 * The last line of the error mapping: anything thrown below becomes a native error response
 * through {@linkcode responseForError}, which never exposes an unknown error's message or stack.
 * Unexpected errors (anything but a {@linkcode BeaconError} refusal) go to the operator's
 * `onError` hook (for logs), never to the client.
 *
 * @module
 */
import { BeaconError, codeForError, responseForError } from "../errors.ts";
import type { Middleware } from "./compose.ts";

/** Catches everything thrown further down the chain. */
export function errorBoundary(onError: ((error: unknown) => void) | undefined): Middleware {
  return async (context, next) => {
    try {
      return await next();
    } catch (error) {
      context.log.code = codeForError(error);
      if (error instanceof BeaconError) {
        context.log.outcome = "refused"; // an expected refusal, not a fault worth reporting
      } else {
        context.log.outcome = "failed";
        try {
          onError?.(error);
        } catch {
          // A failing log hook must not turn a mapped error into an unmapped one.
        }
      }
      return responseForError(error);
    }
  };
}
