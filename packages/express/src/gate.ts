import {
  decideAndWrite,
  fromNodeRequest,
  writeResponseOutcome,
  type AnyHttpOutcome,
  type HttpDecider,
  type NodeFallback,
  type Pass,
} from '@sluice/core/adapter';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** What a rate limit or a concurrency limit decides for an Express request. */
export type ExpressOutcome = AnyHttpOutcome<NodeFallback<Request, Response>>;

/** Runs one limit (or several) for a request: `true` when it may go on — synchronously when core can tell at once. */
export type Gate = (req: Request, res: Response) => Pass;

/** The gate of a limit from core: decides, then writes the outcome on Node's response. */
export function gateOf(decider: HttpDecider<Request, ExpressOutcome>): Gate {
  // Read once, here: a CommonJS build reads an import through getters at each use.
  const [decide, write, httpOf] = [decideAndWrite, writeResponseOutcome, fromNodeRequest];
  return (req, res) => decide(decider, req, res, httpOf(req), res, write);
}

/** The middleware `name` (as stack traces show it) that runs `gate`: `next()` when it passes, `next(err)` when it fails. */
export function middlewareOf(gate: Gate, name: string): RequestHandler {
  const middleware = (req: Request, res: Response, next: NextFunction): void => {
    let pass: Pass;
    try {
      pass = gate(req, res);
    } catch (error) {
      return next(error);
    }
    if (pass === true) next();
    else if (pass !== false) pass.then((ok) => ok && next(), next);
  };
  return Object.defineProperty(middleware, 'name', { value: name });
}
