import {
  decideAndWrite,
  fromRequestLike,
  writeReplyOutcome,
  type AnyHttpOutcome,
  type HttpDecider,
  type NodeFallback,
  type Pass,
} from '@sluice/core/adapter';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';

/** Runs one limit (or several) for a request: `true` when it may go on — synchronously when core can tell at once. */
export type Gate = (request: FastifyRequest, reply: FastifyReply) => Pass;

/** The gate of a limit from core: decides, then writes the outcome on the reply. */
export function gateOf(
  decider: HttpDecider<FastifyRequest, AnyHttpOutcome<NodeFallback<FastifyRequest, FastifyReply>>>,
): Gate {
  // Read once, here: a CommonJS build reads an import through getters at each use.
  const [decide, write, httpOf] = [decideAndWrite, writeReplyOutcome, fromRequestLike];
  return (request, reply) => decide(decider, request, reply, httpOf(request), reply.raw, write);
}

/** A callback-style hook `name` (as stack traces show it) that runs `gate`: in memory, without a promise. */
export function hookOf(gate: Gate, name: string): onRequestHookHandler {
  const hook: onRequestHookHandler = (request, reply, done) => {
    const pass = gate(request, reply);
    // A refused request has its reply sent (or hijacked): Fastify wants no `done` then.
    if (pass === true) done();
    else if (pass !== false) pass.then((ok) => ok && done(), done);
  };
  return Object.defineProperty(hook, 'name', { value: name });
}
