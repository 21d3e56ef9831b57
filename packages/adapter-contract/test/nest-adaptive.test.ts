import { describeAdaptiveContract } from './adaptive-contract';
import { NEST_CONCURRENCY_DRIVERS } from './nest-concurrency-drivers';

// The adaptive contract of adaptive.test.ts on `@AdaptiveLimit`, run by the jest projects of
// Nest 11 and of Nest 12.
for (const driver of NEST_CONCURRENCY_DRIVERS) describeAdaptiveContract(driver);
