import { describeAdaptiveContract } from './adaptive-contract';
import { CONCURRENCY_DRIVERS } from './concurrency-drivers';
import { fetchAdaptiveDriver, honoConcurrencyDriver } from './hono-drivers';

for (const driver of [...CONCURRENCY_DRIVERS, honoConcurrencyDriver(), fetchAdaptiveDriver()])
  describeAdaptiveContract(driver);
