import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

/**
 * Headers a reverse proxy adds: a request carrying one came through a proxy, from anywhere. Not
 * only those naming the client: nginx's plain `proxy_pass`, or HAProxy without `option
 * forwardfor`, add none of those, yet a `Via` or an `X-Forwarded-Proto` often.
 */
const FORWARDING_HEADERS = [
  'forwarded',
  'x-forwarded-for',
  'x-real-ip',
  'via',
  'x-forwarded-host',
  'x-forwarded-proto',
  'x-forwarded-port',
  'x-client-ip',
  'cf-connecting-ip',
  'true-client-ip',
] as const;

/**
 * Whether a request comes from this machine: its socket's peer is a loopback address
 * (127.0.0.0/8, ::1, or ::ffff:127.x.x.x) and it carries no proxy header. A reverse proxy on
 * the same machine connects from loopback for every client it forwards; the headers it adds
 * tell such requests apart, so the dashboard is not opened to the world through the proxy.
 */
export function isLoopbackRequest(req: IncomingMessage): boolean {
  const address = req.socket?.remoteAddress;
  if (address === undefined || isIP(address) === 0) return false;
  const loopback = address === '::1' || /^(?:::ffff:)?127\./i.test(address);
  return loopback && FORWARDING_HEADERS.every((name) => req.headers[name] === undefined);
}
