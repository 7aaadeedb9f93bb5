/**
 * The last line of the error mapping: anything thrown below becomes a native error response
 * through {@linkcode responseForError}, which never exposes an unknown error's message or stack.
 * Unexpected errors (anything but an expected refusal, `isRefusal` in src/http/errors.ts) go to
 * the operator's `onError` hook (for logs), never to the client.
 *
 * @module
 */
import { codeForError, isRefusal, responseForError } from "../http/errors.ts";
import { recordFailure } from "../http/request_log.ts";
import type { Middleware } from "./compose.ts";

/**
 * Catches everything thrown further down the chain: a rejection of the chain's promise, or a
 * throw before a middleware returned one. One reaction on the chain's own promise rather than an
 * async frame around it, since every request passes through here.
 */
export function errorBoundary(onError: ((error: unknown) => void) | undefined): Middleware {
  return (context, next) => {
    const answer = (error: unknown): Response => {
      recordFailure(context, error, codeForError(error), isRefusal(error), onError);
      return responseForError(error);
    };
    try {
      return next().catch(answer);
    } catch (error) {
      return Promise.resolve(answer(error));
    }
  };
}
