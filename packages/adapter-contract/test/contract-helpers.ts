import type request from 'supertest';
import type { FakeClock } from '../../core/test/contract/fake-clock';
import type { ContractOptions, Mount, TestApp } from './drivers';

/** What the adapter contract's parts share: how a test serves an app (closed after it), GETs, and its clock. */
export interface ContractHelpers {
  serve(options: ContractOptions | ContractOptions[], mount?: Mount): Promise<TestApp>;
  get(
    app: TestApp,
    path?: string,
    headers?: Record<string, string>,
  ): ReturnType<ReturnType<typeof request>['get']>;
  /** The fake clock of the running test (a new one before each). */
  clock(): FakeClock;
}
