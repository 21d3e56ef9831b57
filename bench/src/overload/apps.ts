import type { AddressInfo } from 'node:net';
import { setImmediate as turn } from 'node:timers/promises';
import underPressure from '@fastify/under-pressure';
import { concurrencyLimit } from '@sluice/fastify';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { adaptiveCandidate } from './adaptive-candidate';
import { Backend } from './backend';
import {
  BURN_MS,
  SERVICE_MS,
  SLOTS,
  UNDER_PRESSURE_OPTIONS,
  type CandidateSpec,
  type Workload,
} from './scenario';

/** One candidate's app on its own loopback port, with its own backend. */
export interface OverloadApp {
  readonly port: number;
  readonly backend: Backend;
  /** The adaptive limit now (total over partitions), for the candidates that have one. */
  readonly limit?: () => number;
  /** Requests the handler has not answered yet. */
  readonly inHandler: () => number;
  /** Connections open to this app. */
  readonly connections: () => Promise<number>;
  close(): Promise<void>;
}

function burn(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

const gone = (request: FastifyRequest) => () => request.raw.destroyed || request.raw.socket.destroyed;

/** Adds the candidate's limit to `app`; returns how to read its limit, if it has one. */
async function limitWith(app: FastifyInstance, spec: CandidateSpec): Promise<(() => number) | undefined> {
  switch (spec.kind) {
    case 'none':
      return undefined;
    case 'concurrency':
      // One count for the whole instance, refused at once (no queue) with 503, as nginx does.
      app.addHook('onRequest', concurrencyLimit({ key: 'all', max: spec.max, status: 503 }));
      return undefined;
    case 'under-pressure':
      await app.register(underPressure, UNDER_PRESSURE_OPTIONS);
      return undefined;
    case 'adaptive':
    case 'adaptive-shares':
      return adaptiveCandidate(app, spec.kind === 'adaptive-shares');
  }
}

/**
 * Starts one app: `GET /browse` and `GET /checkout` (the same handler; the priorities scenario
 * tells them apart) wait on the backend or burn CPU, then answer a short body.
 */
export async function startOverloadApp(workload: Workload, spec: CandidateSpec): Promise<OverloadApp> {
  const app = Fastify({ keepAliveTimeout: 60_000 });
  const backend = new Backend(SLOTS, SERVICE_MS);
  const limit = await limitWith(app, spec);
  let inHandler = 0;
  const handler = async (request: FastifyRequest) => {
    inHandler++;
    try {
      if (workload === 'backend') await backend.run(gone(request));
      else {
        // Work for a client that has gone is skipped, as for the backend.
        if (!gone(request)()) burn(BURN_MS / 2);
        await turn();
        if (!gone(request)()) burn(BURN_MS / 2);
      }
      return 'ok';
    } finally {
      inHandler--;
    }
  };
  app.get('/browse', handler);
  app.get('/checkout', handler);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return {
    port: (app.server.address() as AddressInfo).port,
    backend,
    ...(limit === undefined ? {} : { limit }),
    inHandler: () => inHandler,
    connections: () =>
      new Promise((resolve) => app.server.getConnections((error, count) => resolve(error ? 0 : count))),
    close: () => app.close(),
  };
}
