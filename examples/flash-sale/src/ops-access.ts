import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isLoopbackRequest } from '@sluice/metrics';
import type { RequestHandler } from 'express';

/** Who may read `/metrics` and the dashboard: they show every zone's traffic and its hot keys (client addresses, user ids). */
export interface OpsAccess {
  /** Whether the request may see them (the dashboard's `authorize`). */
  allows(req: IncomingMessage): boolean;
  /** Express middleware in front of both: a refused request gets 401 (with a token) or 403. */
  readonly guard: RequestHandler;
}

/** Shorter tokens are refused at start: a guessable one protects nothing. */
const MIN_TOKEN_LENGTH = 16;

/**
 * The shop's check for its operations endpoints. With a token (`OPS_TOKEN`), only a request
 * carrying it: `Authorization: Bearer <token>` (Prometheus' `authorization` or `bearer_token`
 * setting), or as the password of HTTP Basic, which a browser asks for and then sends with the
 * dashboard's page and its event stream (an `EventSource` cannot set a header). Without one,
 * only this machine: loopback clients whose request carries no proxy header (the shop's own
 * reverse proxy adds `X-Forwarded-For`, which the limits need), as `dashboard`'s `'loopback'`.
 *
 * @param token - the shared secret, or `undefined` for this machine only
 * @throws Error when the token is shorter than 16 characters
 */
export function opsAccess(token: string | undefined): OpsAccess {
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH)
    throw new Error(`OPS_TOKEN: at least ${MIN_TOKEN_LENGTH} characters, for a secret worth the name`);
  const expected = token === undefined ? undefined : digest(token);
  const allows = (req: IncomingMessage): boolean => {
    if (expected === undefined) return isLoopbackRequest(req);
    const given = presentedToken(req.headers.authorization);
    // Digests of equal length: the comparison takes the same time whatever was sent.
    return given !== undefined && timingSafeEqual(digest(given), expected);
  };
  const guard: RequestHandler = (req, res, next) => {
    if (allows(req)) return next();
    res.set('Cache-Control', 'no-store');
    if (expected === undefined) {
      res
        .status(403)
        .type('text/plain')
        .send('forbidden: this machine only (set OPS_TOKEN to allow others)\n');
      return;
    }
    res.set('WWW-Authenticate', 'Basic realm="sluice ops"');
    res.status(401).type('text/plain').send('unauthorized: send the OPS_TOKEN\n');
  };
  return { allows, guard };
}

/** The token an `Authorization` header carries: a Bearer token, or a Basic password. */
function presentedToken(header: string | undefined): string | undefined {
  const space = header?.indexOf(' ') ?? -1;
  if (header === undefined || space < 0) return undefined;
  const scheme = header.slice(0, space).toLowerCase();
  const value = header.slice(space + 1);
  if (scheme === 'bearer') return value;
  if (scheme !== 'basic') return undefined;
  const credentials = Buffer.from(value, 'base64').toString('utf8');
  const colon = credentials.indexOf(':');
  return colon < 0 ? undefined : credentials.slice(colon + 1);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
