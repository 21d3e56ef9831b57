import { describeConnectionResets } from './connection-resets';
import { describeDecodingCost } from './decoding-cost';
import { NEST_DRIVERS } from './nest-drivers';
import { describeQueryBypasses } from './query-bypasses';
import { describeNotFound } from './not-found';
import { describeRoutes } from './routes';

// What the key reads of a request (issue #16, items 1, 2, 3 and 7) on Nest, both platforms:
// request-facts.test.ts runs the same on Express, Koa and Fastify.
for (const driver of NEST_DRIVERS) {
  describeConnectionResets(driver);
  describeQueryBypasses(driver);
  describeDecodingCost(driver);
  describeRoutes(driver);
  describeNotFound(driver);
}
