/**
 * The part of Node's `http.ServerResponse` that tells whether the client is still there. Every
 * framework exposes it: Express `res`, Koa `ctx.res`, Fastify `reply.raw`.
 */
export interface ClosableResponse {
  /** `true` once the connection is closed (the client left, or the response was sent). */
  readonly closed?: boolean;
  /** `true` once the response was destroyed. */
  readonly destroyed?: boolean;
  once(event: 'close', listener: () => void): unknown;
  removeListener(event: 'close', listener: () => void): unknown;
}

/**
 * Holds an admitted request for `delayMs` (nginx `limit_req` without `nodelay`, a `queue`,
 * `warmup`: the request waits its turn) with one timer, and tells whether to pass it on:
 * `false` when the client disconnected meanwhile, so nothing is run for a request nobody is
 * waiting for — and then `onLeave` runs (the adapters give the turn back with it).
 *
 * @param delayMs - milliseconds to hold (from `decision.delayMs`)
 * @param response - the raw response, watched for `close`
 * @param onLeave - called once if the client leaves before its turn
 * @returns `true` after the delay if the client is still connected, `false` as soon as it leaves
 * @example
 * ```ts
 * if (await holdRequest(outcome.delayMs, res, outcome.cancel)) next();
 * ```
 */
export function holdRequest(
  delayMs: number,
  response: ClosableResponse,
  onLeave?: () => void,
): Promise<boolean> {
  if (response.closed === true || response.destroyed === true) {
    onLeave?.();
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    const gone = (): void => {
      clearTimeout(timer);
      onLeave?.();
      resolve(false);
    };
    const timer = setTimeout(() => {
      response.removeListener('close', gone);
      const here = response.closed !== true && response.destroyed !== true;
      if (!here) onLeave?.();
      resolve(here);
    }, delayMs);
    response.once('close', gone);
  });
}
