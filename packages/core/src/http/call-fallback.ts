import type { HttpHandlerOutcome } from './http-options';

/**
 * The part of Node's `http.ServerResponse` sluice writes to when a fallback handler fails: every
 * framework exposes it (Express `res`, Koa `ctx.res`, Fastify `reply.raw`).
 */
export interface RawResponse {
  readonly headersSent: boolean;
  readonly writableEnded: boolean;
  statusCode: number;
  getHeaderNames(): string[];
  removeHeader(name: string): void;
  setHeader(name: string, value: string): unknown;
  end(body?: string): unknown;
}

/**
 * Calls the user's fallback handler of a `handler` outcome. When it throws or rejects, the error
 * goes to `onCallbackError` (source `'fallback'`) and the client still gets a valid reply on the raw
 * response: the default rejection (`status`, `Retry-After`, a short body, the rate-limit headers;
 * headers the handler had set are dropped) when nothing was sent yet, else the response is ended.
 * Never a hanging request, never an unhandled rejection.
 *
 * @param outcome - the `handler` outcome
 * @param args - the framework's arguments for the handler (Express `[req, res, decision]`)
 * @param raw - the raw response
 * @param takeOver - for frameworks that send replies themselves, called before sluice writes to
 *   `raw` (Koa: `ctx.respond = false`; Fastify: `reply.hijack()`)
 * @returns `true` when the handler replied, `false` when sluice answered instead
 * @example
 * ```ts
 * // Express
 * await callFallback(outcome, [req, res, outcome.decision], res);
 * ```
 */
export async function callFallback<THandler extends (...args: never[]) => unknown>(
  outcome: Pick<HttpHandlerOutcome<THandler>, 'handler' | 'rejection' | 'reportError'>,
  args: Parameters<THandler>,
  raw: RawResponse,
  takeOver?: () => unknown,
): Promise<boolean> {
  try {
    // Awaited inside the try: a handler that throws synchronously or rejects lands in the catch.
    await (outcome.handler as (...handlerArgs: Parameters<THandler>) => unknown)(...args);
    return true;
  } catch (error) {
    outcome.reportError(error);
  }
  takeOver?.();
  if (raw.headersSent) {
    if (!raw.writableEnded) raw.end();
    return false;
  }
  const { rejection } = outcome;
  // Whatever the handler set (a Content-Length, a cache header) belonged to the reply it never sent.
  for (const name of raw.getHeaderNames()) raw.removeHeader(name);
  raw.statusCode = rejection.status;
  for (const [name, value] of rejection.headers) raw.setHeader(name, value);
  raw.setHeader('Content-Type', rejection.type);
  raw.end(rejection.body);
  return false;
}
