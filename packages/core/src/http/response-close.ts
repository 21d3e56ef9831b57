import type { ClosableConnection, ClosableResponse } from './hold-request';

/** Listeners of sockets whose responses Node cannot tell of a close (see {@link onResponseClose}). */
const sockets = new WeakMap<
  ClosableConnection,
  { readonly listeners: Set<() => void>; readonly onClose: () => void }
>();

const IGNORE = (): void => undefined;

/**
 * Calls `onClose` once, when the response is done with: sent (Node emits `close` after `finish`),
 * or its connection closed (the client left, a timeout, a reset), whatever the handler did —
 * threw, never answered, or is still writing. This is when a concurrency permit goes back.
 *
 * One case Node leaves silent: a pipelined request's response waits in Node's queue behind the
 * one being written, without a socket of its own, and gets no `close` when the connection drops.
 * For it the request's socket is watched, with one `close` listener per socket however many such
 * responses it carries, until the response gets its turn.
 *
 * @param response - the raw response (Express `res`, Koa `ctx.res`, Fastify `reply.raw`)
 * @param onClose - called once; at once when the response is closed already
 * @returns a function that stops watching (`onClose` will not be called)
 */
export function onResponseClose(response: ClosableResponse, onClose: () => void): () => void {
  const socket = response.req?.socket ?? undefined;
  if (response.closed === true || response.destroyed === true || socket?.destroyed === true) {
    onClose();
    return IGNORE;
  }
  let done = false;
  // Queued behind another response: its own `close` comes only if it gets its turn.
  const queued = response.socket == null && socket !== undefined ? socket : undefined;
  const stop = (): void => {
    done = true;
    response.removeListener('close', fire);
    if (queued !== undefined) unwatch(queued, fire);
  };
  const fire = (): void => {
    if (done) return;
    stop();
    onClose();
  };
  response.once('close', fire);
  if (queued !== undefined) watch(queued, fire);
  return () => {
    if (!done) stop();
  };
}

/** A response that can take a plain `close` listener (every Node `ServerResponse`). */
export type ListenableResponse = ClosableResponse & { on(event: 'close', listener: () => void): unknown };

/**
 * Gives `permit` back when the response closes (see {@link onResponseClose}). The common case,
 * a response answering on its own socket, costs one plain listener, never removed: it goes with
 * the response, and a release is idempotent.
 *
 * @param response - the raw response
 * @param permit - what to release, once
 */
export function releaseOnClose(response: ListenableResponse, permit: { release(): unknown }): void {
  const socket = response.req?.socket;
  if (response.socket != null || socket == null) {
    if (response.closed === true || response.destroyed === true || socket?.destroyed === true)
      void permit.release();
    else response.on('close', () => void permit.release());
    return;
  }
  onResponseClose(response, () => void permit.release());
}

function watch(socket: ClosableConnection, listener: () => void): void {
  let watching = sockets.get(socket);
  if (watching === undefined) {
    const listeners = new Set<() => void>();
    const onClose = (): void => {
      sockets.delete(socket);
      for (const each of [...listeners]) each();
    };
    watching = { listeners, onClose };
    sockets.set(socket, watching);
    socket.once('close', onClose);
  }
  watching.listeners.add(listener);
}

function unwatch(socket: ClosableConnection, listener: () => void): void {
  const watching = sockets.get(socket);
  if (watching === undefined || !watching.listeners.delete(listener) || watching.listeners.size > 0) return;
  // A keep-alive connection outlives its queued responses: no listener stays behind on it.
  sockets.delete(socket);
  socket.removeListener('close', watching.onClose);
}
