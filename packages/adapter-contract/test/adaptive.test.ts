import { describeAdaptiveContract } from './adaptive-contract';
import { CONCURRENCY_DRIVERS } from './concurrency-drivers';

for (const driver of CONCURRENCY_DRIVERS) describeAdaptiveContract(driver);
