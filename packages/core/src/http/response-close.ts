import type { ClosableConnection, ClosableResponse } from './hold-request';

/**
 * The responses of one socket queued behind another (see {@link onResponseClose}) and not closed
 * yet: what to call if the socket closes first. One `close` listener per socket for its whole
 * life, however many responses come and go on it.
 *
 * A list of slots rather than a `Set`: with pipelining, a batch of responses joins and leaves at
 * every request, and a set (promoted to old space with its long-lived socket) rebuilt its hash
 * table as it grew and shrank — several old-space tables per batch, garbage for the major GC. The
 * slots are reused: a response leaving empties its own, and once none is pending the list starts
 * over, with the array it has.
 */
interface Queue {
  /** Slots `[0, used)`: what to call, or `undefined` once its response has left. */
  readonly calls: Array<(() => void) | undefined>;
  used: number;
  /** Slots still holding a call. */
  pending: number;
  /** Calls past the slots (a client pipelining without ever letting its queue drain). */
  overflow: Set<() => void> | undefined;
}

/** Slots of one socket; calls past them go to its `overflow` set. */
const MAX_SLOTS = 1024;
/** The slot of a call in the overflow set. */
const OVERFLOW = -1;
/** The slot of a call that has run or stopped watching. */
const LEFT = -2;

const queues = new WeakMap<ClosableConnection, Queue>();

const IGNORE = (): void => undefined;

/** A response that can take a plain `close` listener (every Node `ServerResponse`). */
export type ListenableResponse = ClosableResponse & {
  on(event: 'close', listener: () => void): unknown;
  /**
   * Node's `ServerResponse.end`, which the handler calls once its response is complete: a
   * concurrency permit goes back then. A response without one gives its permit back at `close`.
   */
  end?: (...args: never[]) => unknown;
};

/**
 * Calls `onClose` once, when the response is done with: sent (Node emits `close` after `finish`),
 * or its connection closed (the client left, a timeout, a reset), whatever the handler did —
 * threw, never answered, or is still writing. A concurrency permit goes back earlier, when the
 * handler ends the response (see {@link releaseOnEnd}).
 *
 * One case Node leaves silent: a pipelined request's response waits in Node's queue behind the
 * one being written, without a socket of its own, and gets no `close` when the connection drops.
 * For it the request's socket is watched instead, until the response closes.
 *
 * @param response - the raw response (Express `res`, Koa `ctx.res`, Fastify `reply.raw`)
 * @param onClose - called once; at once when the response is closed already
 * @returns a function that stops watching (`onClose` will not be called)
 */
export function onResponseClose(response: ListenableResponse, onClose: () => void): () => void {
  const socket = response.req?.socket ?? undefined;
  if (response.closed === true || response.destroyed === true || socket?.destroyed === true) {
    onClose();
    return IGNORE;
  }
  // Queued behind another response: its own `close` comes only if it gets its turn.
  const queue = response.socket == null && socket !== undefined ? queueOf(socket) : undefined;
  let slot = LEFT;
  let done = false;
  const fire = (): void => {
    if (done) return;
    done = true;
    if (queue !== undefined) leave(queue, slot, fire);
    onClose();
  };
  response.on('close', fire);
  if (queue !== undefined) slot = join(queue, fire);
  return () => {
    if (done) return;
    done = true;
    if (queue !== undefined) leave(queue, slot, fire);
    response.removeListener('close', fire);
  };
}

/** What {@link watchClose} tells: an object with a method, so that a watch costs no closure. */
export interface CloseWatcher {
  /** Called once, when the response is done with (see {@link onResponseClose}). */
  closed(): void;
}

/**
 * {@link onResponseClose} for a watcher object, at the least cost: on a response answering its
 * request, one listener, a closure over the watcher (measured cheaper than keeping the watcher on
 * the response under a symbol for one shared listener: the property grows every response), never
 * removed, and no function to stop watching. A queued pipelined response as `onResponseClose`.
 *
 * @param response - the raw response
 * @param watcher - its `closed()` is called once; at once when the response is closed already
 */
export function watchClose(response: ListenableResponse, watcher: CloseWatcher): void {
  const socket = response.req?.socket ?? undefined;
  if (response.closed === true || response.destroyed === true || socket?.destroyed === true) {
    watcher.closed();
    return;
  }
  if (response.socket == null && socket !== undefined) {
    onResponseClose(response, () => watcher.closed());
    return;
  }
  response.on('close', () => watcher.closed());
}

/**
 * Gives `permit` back once the handler has ended the response (its `end()` called: the response
 * is complete, whether or not the client has read it), or when the connection closes first (the
 * client left, a timeout, a reset) — once. A permit guards the handler's work: a client that
 * stops reading must not hold it for as long as it stays connected, nor a pipelined response
 * waiting in Node's queue behind one the client never reads (its `close`, even its `finish`,
 * would come only when its turn does). A response the handler never ends keeps its permit until
 * its connection closes.
 *
 * At the least cost: `end` wrapped on the response itself, and one `close` listener, neither
 * removed (they go with the response, and the release runs once); for a queued pipelined
 * response, one slot in its socket's queue instead of a `close` that would never come.
 *
 * @param response - the raw response
 * @param permit - what to release
 * @returns `false` when the response had closed already (the client left while the permit was
 *   asked for): the permit is given back at once, and nothing should run for the request
 */
export function releaseOnEnd(response: ListenableResponse, permit: { release(): unknown }): boolean {
  const socket = response.req?.socket ?? undefined;
  if (response.closed === true || response.destroyed === true || socket?.destroyed === true) {
    void permit.release();
    return false;
  }
  const queue = response.socket == null && socket !== undefined ? queueOf(socket) : undefined;
  let slot = LEFT;
  let held = true;
  const release = (): void => {
    if (!held) return;
    held = false;
    if (queue !== undefined) leave(queue, slot, release);
    void permit.release();
  };
  const end = response.end;
  if (typeof end === 'function') {
    // Whatever `end` does (a wrapper of another middleware's, a throw), the permit goes back.
    response.end = function sluiceEnd(this: unknown, ...args: never[]): unknown {
      try {
        return end.apply(this, args);
      } finally {
        release();
      }
    };
  }
  response.on('close', release);
  if (queue !== undefined) slot = join(queue, release);
  return true;
}

/** The queue of `socket`, its one `close` listener installed on first use. */
function queueOf(socket: ClosableConnection): Queue {
  let queue = queues.get(socket);
  if (queue === undefined) {
    const made: Queue = { calls: [], used: 0, pending: 0, overflow: undefined };
    queues.set(socket, (queue = made));
    socket.once('close', () => {
      queues.delete(socket);
      // Each call leaves the queue as it runs: from copies.
      const overflow = made.overflow === undefined ? [] : [...made.overflow];
      for (const call of made.calls.slice(0, made.used)) call?.();
      for (const call of overflow) call();
    });
  }
  return queue;
}

/** Adds `call` to the queue: its slot, for {@link leave}. */
function join(queue: Queue, call: () => void): number {
  if (queue.used === MAX_SLOTS) {
    (queue.overflow ??= new Set()).add(call);
    return OVERFLOW;
  }
  queue.calls[queue.used] = call;
  queue.pending++;
  return queue.used++;
}

/** Takes the call in `slot` out of the queue; once none is pending, the slots start over. */
function leave(queue: Queue, slot: number, call: () => void): void {
  if (slot === OVERFLOW) {
    queue.overflow?.delete(call);
    return;
  }
  if (slot === LEFT) return;
  queue.calls[slot] = undefined;
  if (--queue.pending === 0) queue.used = 0;
}
