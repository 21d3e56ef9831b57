import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FALLBACK_ERROR, type FallbackFailure, type Outcome, type TestApp } from './drivers';

/** Fails as `how` says, once `begin` has set what a handler sets before failing (status, headers or partial body). */
async function fail(how: FallbackFailure, begin: { headers(): void; midReply(): void }): Promise<never> {
  if (how === 'reject') await Promise.resolve();
  if (how === 'throw-after-headers') begin.headers();
  if (how === 'throw-mid-reply') begin.midReply();
  throw new Error(FALLBACK_ERROR);
}

/** The synchronous throw of `throw`, else the promise of {@link fail}. */
export function failing(how: FallbackFailure, begin: { headers(): void; midReply(): void }): unknown {
  if (how === 'throw') throw new Error(FALLBACK_ERROR);
  return fail(how, begin);
}

/** Writes 200 and `partial` on a raw response, as a handler streaming its reply would. */
export function writePartial(raw: ServerResponse): void {
  raw.writeHead(200, { 'Content-Type': 'text/plain' });
  raw.write('partial');
}

/** The outcome a request asks for (`?outcome=`), `ok` by default. */
export function outcomeOf(url: string | undefined): Outcome {
  const asked = new URL(url ?? '/', 'http://sluice.test').searchParams.get('outcome');
  return asked === 'fail' || asked === 'throw' || asked === 'hang' ? asked : 'ok';
}

/** Resolves when `raw` (Node's response) closes: a `hang` handler waits for its client to leave. */
export function closed(raw: ServerResponse): Promise<void> {
  return new Promise((resolve) => raw.once('close', () => resolve()));
}

/** Listens on an ephemeral port and completes the app: its URL, and `close`. */
export async function listen(
  server: Server,
  app: Omit<TestApp, 'server' | 'url' | 'close'>,
  close?: () => Promise<void>,
): Promise<TestApp> {
  // The default dual-stack address: IPv4 clients appear as ::ffff:127.0.0.1, as in production.
  if (!server.listening) await new Promise<void>((resolve) => server.listen(0, resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(app, {
    server,
    // 127.0.0.1, not localhost: the client address is then known (localhost may resolve to ::1).
    url: `http://127.0.0.1:${port}`,
    close:
      close ??
      (() =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        })),
  });
}
