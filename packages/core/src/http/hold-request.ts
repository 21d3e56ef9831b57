/**
 * What tells that a client left: Node's `net.Socket` under an HTTP/1 request (`req.socket`), or
 * the response itself where no socket is at hand.
 */
export interface ClosableConnection {
  /** `true` once closed. */
  readonly destroyed?: boolean;
  once(event: 'close', listener: () => void): unknown;
  removeListener(event: 'close', listener: () => void): unknown;
}

/**
 * The part of Node's `http.ServerResponse` that tells whether the client is still there. Every
 * framework exposes it: Express `res`, Koa `ctx.res`, Fastify `reply.raw`.
 */
export interface ClosableResponse extends ClosableConnection {
  /** `true` once the connection is closed (the client left, or the response was sent). */
  readonly closed?: boolean;
  /**
   * The request answered: its `socket` is the connection watched. A pipelined response waits in
   * Node's queue without a `socket` of its own, and emits no `close` when the client leaves.
   */
  readonly req?: { readonly socket?: ClosableConnection | null };
  readonly socket?: ClosableConnection | null;
}

/** One held request, as its connection's watch sees it. */
interface Held {
  /** Ends the hold because the client left. */
  leave(): void;
}

/** The held requests of one connection, released together by the one `close` listener they share. */
interface Watch {
  readonly held: Set<Held>;
  readonly onClose: () => void;
}

const watches = new WeakMap<ClosableConnection, Watch>();
let heldNow = 0;

/**
 * Requests held right now by {@link holdRequest} in this process: each has one timer. 0 once
 * every held client was served or left.
 */
export function heldRequestCount(): number {
  return heldNow;
}

/**
 * Holds an admitted request for `delayMs` (nginx `limit_req` without `nodelay`, a `queue`,
 * `warmup`: the request waits its turn) with one timer, and tells whether to pass it on:
 * `false` when the client disconnected meanwhile, so nothing is run for a request nobody is
 * waiting for — and then `onLeave` runs (the adapters give the turn back with it).
 *
 * The connection watched is the request's socket (`response.req.socket`), with one `close`
 * listener per socket however many requests it holds: pipelined requests (one connection,
 * many requests) are released, their timers cleared, the moment it closes. Their responses wait
 * in Node's queue, where `close` never reaches them. When the timer fires, the socket is checked
 * once more. Bounding how many requests are held is the caller's part: an adapter holds a
 * `delay` outcome with `outcome.hold(res)`, which calls this and keeps the limit's `maxHeld`.
 *
 * @param delayMs - milliseconds to hold (from `decision.delayMs`)
 * @param response - the raw response (Express `res`, Koa `ctx.res`, Fastify `reply.raw`)
 * @param onLeave - called once if the client leaves before its turn
 * @returns `true` after the delay if the client is still connected, `false` as soon as it leaves
 * @example
 * ```ts
 * const decision = await limiter.consume(key);
 * if (decision.delayMs > 0 && !(await holdRequest(decision.delayMs, res, () => limiter.cancel(decision)))) return;
 * ```
 */
export function holdRequest(
  delayMs: number,
  response: ClosableResponse,
  onLeave?: () => void,
): Promise<boolean> {
  const socket = response.req?.socket ?? response.socket ?? undefined;
  const gone = (): boolean =>
    response.closed === true || response.destroyed === true || socket?.destroyed === true;
  if (gone()) {
    onLeave?.();
    return Promise.resolve(false);
  }
  const connection = socket ?? response;
  return new Promise((resolve) => {
    const end = (here: boolean): void => {
      heldNow--;
      unwatch(connection, held);
      if (!here) onLeave?.();
      resolve(here);
    };
    const timer = setTimeout(() => end(!gone()), delayMs);
    const held: Held = {
      leave() {
        clearTimeout(timer);
        end(false);
      },
    };
    heldNow++;
    watch(connection, held);
  });
}

function watch(connection: ClosableConnection, held: Held): void {
  let watching = watches.get(connection);
  if (watching === undefined) {
    const mine: Watch = {
      held: new Set(),
      onClose() {
        // Forgotten first, so each leave() finds no watch to update; a proxy's stale listener
        // (HTTP/2's socket is one) finds another watch, or none, and does nothing.
        if (watches.get(connection) !== mine) return;
        watches.delete(connection);
        for (const each of mine.held) each.leave();
      },
    };
    watching = mine;
    watches.set(connection, mine);
    connection.once('close', mine.onClose);
  }
  watching.held.add(held);
}

function unwatch(connection: ClosableConnection, held: Held): void {
  const watching = watches.get(connection);
  if (watching === undefined || !watching.held.delete(held) || watching.held.size > 0) return;
  // A keep-alive connection outlives its holds: no listener stays behind on it.
  watches.delete(connection);
  connection.removeListener('close', watching.onClose);
}
