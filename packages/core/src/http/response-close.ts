import type { ClosableConnection, ClosableResponse } from './hold-request';

/**
 * Per socket carrying pipelined responses that Node cannot tell of a close (see
 * {@link onResponseClose}): what to call when it closes. One `close` listener per socket for its
 * whole life, however many responses come and go on it; each response takes itself out of the
 * set when it closes, so the set holds only those still waiting.
 */
const sockets = new WeakMap<ClosableConnection, Set<() => void>>();

const IGNORE = (): void => undefined;

/** A response that can take a plain `close` listener (every Node `ServerResponse`). */
export type ListenableResponse = ClosableResponse & {
  on(event: 'close', listener: () => void): unknown;
};

/**
 * Calls `onClose` once, when the response is done with: sent (Node emits `close` after `finish`),
 * or its connection closed (the client left, a timeout, a reset), whatever the handler did —
 * threw, never answered, or is still writing. This is when a concurrency permit goes back.
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
  const waiting = response.socket == null && socket !== undefined ? watched(socket) : undefined;
  let done = false;
  const fire = (): void => {
    if (done) return;
    done = true;
    waiting?.delete(fire);
    onClose();
  };
  response.on('close', fire);
  waiting?.add(fire);
  return () => {
    if (done) return;
    done = true;
    waiting?.delete(fire);
    response.removeListener('close', fire);
  };
}

/**
 * Gives `permit` back when the response closes, as {@link onResponseClose} tells it, at the
 * least cost: one listener, never removed (it goes with the response, and a release is
 * idempotent), and for a queued pipelined response one entry in its socket's set.
 *
 * @param response - the raw response
 * @param permit - what to release
 */
export function releaseOnClose(response: ListenableResponse, permit: { release(): unknown }): void {
  const socket = response.req?.socket ?? undefined;
  if (response.closed === true || response.destroyed === true || socket?.destroyed === true) {
    void permit.release();
  } else if (response.socket != null || socket === undefined) {
    response.on('close', () => void permit.release());
  } else {
    const waiting = watched(socket);
    const release = (): void => {
      waiting.delete(release);
      void permit.release();
    };
    waiting.add(release);
    response.on('close', release);
  }
}

/** The set of what to call when `socket` closes, its one listener installed on first use. */
function watched(socket: ClosableConnection): Set<() => void> {
  let waiting = sockets.get(socket);
  if (waiting === undefined) {
    const set = new Set<() => void>();
    sockets.set(socket, (waiting = set));
    socket.once('close', () => {
      sockets.delete(socket);
      for (const each of [...set]) each();
    });
  }
  return waiting;
}
