import type { CallbackErrorEvent } from '@sluice/core/adapter';
import request from 'supertest';
import { fakeClock, type FakeClock } from '../../core/test/contract/fake-clock';
import type { AdapterDriver, ContractOptions, Mount, ServerSettings, TestApp } from './drivers';

/** Both ways limits are put in front of a handler. */
export const MOUNTS: Mount[] = ['middleware', 'decorator'];

/** What a request sends: a path (with its query) and headers. */
export type Send = { path?: string; headers?: Record<string, string> };

/** The apps of one hostile-input suite, with a fresh clock and failure log per test. */
export interface HostileApps {
  /** The test's clock. */
  readonly clock: FakeClock;
  /** Every `onCallbackError` event of the test's apps, in order. */
  readonly failures: Array<CallbackErrorEvent<unknown>>;
  /** Serves an app behind `options` (plus an `onCallbackError` that logs to `failures`), closed after the test. */
  serve(options: ContractOptions, mount?: Mount, server?: ServerSettings): Promise<TestApp>;
  /** Sends a GET. */
  send(app: TestApp, what?: Send): request.Test;
}

/**
 * Registers the per-test setup of a hostile-input suite (call inside its `describe`): a fresh
 * clock and failure log before each test, every app closed after it.
 */
export function useHostileApps(driver: AdapterDriver): HostileApps {
  const apps: TestApp[] = [];
  const state = { clock: fakeClock(), failures: [] as Array<CallbackErrorEvent<unknown>> };
  beforeEach(() => {
    state.clock = fakeClock();
    state.failures = [];
  });
  afterEach(async () => {
    for (const app of apps.splice(0)) await app.close();
  });
  return {
    get clock() {
      return state.clock;
    },
    get failures() {
      return state.failures;
    },
    async serve(options, mount = 'middleware', server = {}) {
      const onCallbackError = (e: CallbackErrorEvent<unknown>) => state.failures.push(e);
      const app = await driver.serve({ onCallbackError, ...options }, mount, server);
      apps.push(app);
      return app;
    },
    send: (app, { path = '/', headers = {} } = {}) => request(app.url).get(path).set(headers),
  };
}
