import type { FastifyInstance } from 'fastify';

/**
 * Adds sluice's `adaptiveLimit` to `app` (with the priorities' shares when `shares`), and returns
 * how to read its limit.
 */
export async function adaptiveCandidate(_app: FastifyInstance, _shares: boolean): Promise<() => number> {
  throw new Error('adaptiveLimit is not available in this build');
}
