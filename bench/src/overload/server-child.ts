// The overload section's servers, alone on their core: one Fastify app per candidate and
// workload, each on its own loopback port with its own backend. Only one is under load at a time.
import { serveRequests } from '../child';
import { startOverloadApp, type OverloadApp } from './apps';
import type { CandidateSpec, Workload } from './scenario';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const apps = new Map<number, OverloadApp>();
const sampling = new Map<number, { timer: NodeJS.Timeout; samples: Array<[number, number]> }>();

function appAt(port: unknown): OverloadApp {
  const app = apps.get(Number(port));
  if (app === undefined) throw new Error(`no app on port ${String(port)}`);
  return app;
}

serveRequests(async (message) => {
  switch (message.type) {
    case 'start': {
      const app = await startOverloadApp(message.workload as Workload, message.spec as CandidateSpec);
      apps.set(app.port, app);
      return { type: 'started', port: app.port };
    }
    case 'sample': {
      // The adaptive limit every `everyMs` from now, as [ms since now, limit].
      const app = appAt(message.port);
      const started = performance.now();
      const samples: Array<[number, number]> = [];
      const timer = setInterval(() => {
        if (app.limit !== undefined) samples.push([Math.round(performance.now() - started), app.limit()]);
      }, Number(message.everyMs));
      sampling.set(app.port, { timer, samples });
      return { type: 'sampling' };
    }
    case 'samples': {
      const state = sampling.get(Number(message.port));
      if (state !== undefined) clearInterval(state.timer);
      sampling.delete(Number(message.port));
      return { type: 'samples', samples: state?.samples ?? [] };
    }
    case 'resize': {
      appAt(message.port).backend.resize(Number(message.slots));
      return { type: 'resized' };
    }
    case 'idle': {
      // Until the app holds no request and no connection, and the process is quiet: a
      // run's backlog (requests the kernel still held, sockets to close) must not load the next.
      const app = appAt(message.port);
      const until = performance.now() + Number(message.maxMs);
      const quietMs = Number(message.quietMs);
      const busy = async () => app.inHandler() > 0 || app.backend.load > 0 || (await app.connections()) > 0;
      while ((await busy()) && performance.now() < until) await sleep(10);
      // Quiet: under a tenth of a core over `quietMs` (the kernel may still hand over queued work).
      for (;;) {
        const before = process.cpuUsage();
        await sleep(quietMs);
        const used = process.cpuUsage(before);
        if (used.user + used.system < 100 * quietMs || performance.now() >= until) break;
      }
      return { type: 'idle', left: app.inHandler() + app.backend.load + (await app.connections()) };
    }
    case 'cpu': {
      const cpu = process.cpuUsage();
      return { type: 'cpu', micros: cpu.user + cpu.system };
    }
    default:
      throw new Error(`unknown request ${message.type}`);
  }
});
process.once('SIGTERM', () => process.exit(0));
process.send?.({ type: 'ready' });
