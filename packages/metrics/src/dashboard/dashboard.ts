import type { IncomingMessage, ServerResponse } from 'node:http';
import { SluiceConfigError } from '@sluice/core';
import { checkOptionNames } from '@sluice/core/adapter';
import { countsOf, type SluiceMetrics } from '../counting/sluice-metrics';
import { EventStream, eventText } from './event-stream';
import { History, HISTORY_POINTS } from './history';
import { isLoopbackRequest } from './loopback';
import { PAGE_HTML, SECURITY_HEADERS } from './page';

/** Who may see the dashboard: a check of your own, or `'loopback'` for this machine alone. */
export type DashboardAuthorize = ((req: IncomingMessage) => boolean | Promise<boolean>) | 'loopback';

/** Options of {@link dashboard}. */
export interface DashboardOptions {
  /** The metrics the limiters report to: what `prometheus()` returned. */
  metrics: SluiceMetrics;
  /**
   * Who may see the dashboard; required, since the page shows client keys (addresses, user ids):
   * - a function: `true` lets the request in, anything else answers 403. May return a promise;
   *   one that rejects or a function that throws answers 403.
   * - `'loopback'`: only loopback clients (127.0.0.0/8, ::1) whose request carries no header a
   *   proxy adds (see {@link isLoopbackRequest}). For local use only: a reverse proxy on the same
   *   machine that adds no such header (nginx's plain `proxy_pass`) would let everyone it serves in.
   */
  authorize: DashboardAuthorize;
  /** How often the page is updated (and the chart sampled), in ms, 100 to 60000. @defaultValue 1000 */
  intervalMs?: number;
  /** Pages that may follow the live stream at once; more get 503. 1 to 1000. @defaultValue 16 */
  maxClients?: number;
  /**
   * Of those, how many one client address may follow at once; more get 429, so that one client
   * cannot hold every place. 1 to 1000. Behind a reverse proxy every page comes from the proxy's
   * address: raise it to `maxClients` there. @defaultValue 4
   */
  maxClientsPerAddress?: number;
}

/** A Node request listener serving the dashboard; {@link Dashboard.close} stops its timer and streams. */
export interface Dashboard {
  (req: IncomingMessage, res: ServerResponse): void;
  /** Stops sampling and ends every open stream (tests, shutdown). The timer never keeps the process alive. */
  close(): void;
}

const OPTION_NAMES: ReadonlySet<string> = new Set([
  'metrics',
  'authorize',
  'intervalMs',
  'maxClients',
  'maxClientsPerAddress',
]);

const AUTHORIZE_ACCEPTED =
  "a function (req) => boolean | Promise<boolean>, or 'loopback' for local use (loopback clients without proxy headers)";

/**
 * A live page of every limiter reporting to `metrics`: admitted / delayed / limited per second
 * over the last 5 minutes (a chart), totals, degraded decisions by mode, store health and
 * latency percentiles, and the hot keys, updated every `intervalMs` through server-sent events.
 *
 * A Node request listener `(req, res)`: mount it under any path. It serves the page for any GET
 * there and the event stream at `<path>/events` (the page finds it relative to itself); it
 * serves nothing else of the app. One self-contained document (no CDN); the chart is SVG.
 * Bounded: `maxClients` streams, `maxClientsPerAddress` of them per client address, and a fixed
 * history per limiter (at most 200 limiters).
 *
 * @throws `SluiceConfigError` naming an unknown or invalid option, or `authorize` when it is missing
 * @example
 * ```ts
 * const board = dashboard({ metrics, authorize: (req) => isAdmin(req) });
 * app.use('/_sluice', board);                                                 // Express
 * const local = dashboard({ metrics, authorize: 'loopback' });                // this machine only
 * ```
 */
export function dashboard(options: DashboardOptions): Dashboard {
  if (typeof options !== 'object' || options === null)
    throw new SluiceConfigError('options', options, 'expected an object such as { metrics, authorize }');
  checkOptionNames(options, OPTION_NAMES);
  const { metrics, authorize, intervalMs = 1000, maxClients = 16, maxClientsPerAddress = 4 } = options;
  const limiters = countsOf(metrics);
  if (limiters === undefined)
    throw new SluiceConfigError(
      'metrics',
      metrics,
      "expected the metrics of prometheus() from '@sluice/metrics'",
    );
  if (authorize === undefined)
    throw new SluiceConfigError(
      'authorize',
      authorize,
      `required (the page shows client keys): ${AUTHORIZE_ACCEPTED}`,
      'SLUICE_MISSING_OPTION',
    );
  if (authorize !== 'loopback' && typeof authorize !== 'function')
    throw new SluiceConfigError('authorize', authorize, `expected ${AUTHORIZE_ACCEPTED}`);
  wholeNumber('intervalMs', intervalMs, 100, 60_000);
  wholeNumber('maxClients', maxClients, 1, 1000);
  wholeNumber('maxClientsPerAddress', maxClientsPerAddress, 1, 1000);
  const allows = authorize === 'loopback' ? isLoopbackRequest : authorize;

  const history = new History(limiters, intervalMs, (name, n) => metrics.hotKeys(name, n));
  const stream = new EventStream(maxClients, maxClientsPerAddress);
  const tick = (): string => JSON.stringify({ t: Date.now(), limiters: history.frames() });
  // A page that connects draws the chart so far and the latest numbers at once.
  const firstEvents = (): string =>
    eventText(
      'history',
      JSON.stringify({ intervalMs, capacity: HISTORY_POINTS, limiters: history.series() }),
    ) + (history.sampled ? eventText('tick', tick()) : '');
  const timer = setInterval(() => {
    try {
      history.sample();
      // Nobody watching: the history is kept, nothing is built for the page.
      if (stream.size > 0) stream.send('tick', tick());
    } catch {
      // A `clock` given to prometheus() that throws: this update is skipped. Thrown from the
      // timer, it would end the process.
    }
  }, intervalMs);
  timer.unref();

  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('method not allowed\n');
      return;
    }
    if (lastSegment(req.url ?? '/') === 'events') {
      stream.open(req, res, firstEvents);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end(req.method === 'HEAD' ? undefined : PAGE_HTML);
  };
  const forbid = (res: ServerResponse): void => {
    if (res.headersSent) return;
    res.writeHead(403, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' });
    res.end(
      authorize === 'loopback'
        ? 'forbidden: this sluice dashboard answers loopback clients without proxy headers only\n'
        : "forbidden: not allowed by this sluice dashboard's authorize\n",
    );
  };

  const listener = function sluiceDashboard(req: IncomingMessage, res: ServerResponse): void {
    let allowed: boolean | Promise<boolean>;
    try {
      allowed = allows(req);
    } catch {
      return forbid(res);
    }
    if (allowed === true) return serve(req, res);
    if (typeof (allowed as Promise<boolean> | undefined)?.then !== 'function') return forbid(res);
    (allowed as Promise<boolean>).then(
      (ok) => (ok === true ? serve(req, res) : forbid(res)),
      () => forbid(res),
    );
  } as Dashboard;
  listener.close = () => {
    clearInterval(timer);
    stream.close();
  };
  return listener;
}

/** The last segment of a request target's path: `'events'` for `/_sluice/events?x`. */
function lastSegment(url: string): string {
  const path = url.split('?', 1)[0] as string;
  return path.slice(path.lastIndexOf('/') + 1);
}

function wholeNumber(option: string, value: unknown, min: number, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new SluiceConfigError(option, value, `must be a whole number from ${min} to ${max}`);
}
