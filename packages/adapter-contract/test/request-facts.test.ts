import { describeConnectionResets } from './connection-resets';
import { describeDecodingCost } from './decoding-cost';
import { DRIVERS } from './framework-drivers';
import { FETCH_DRIVER, HONO_DRIVER } from './hono-drivers';
import { describeQueryBypasses } from './query-bypasses';
import { describeNotFound } from './not-found';
import { describeRoutes } from './routes';

// What the key reads of a request, on every framework major (issue #16, items 1, 2, 3 and 7):
// the client address of a reset connection, the query as the app parses it, the cost of
// decoding, and the matched route (a bare Fetch handler has none).
for (const driver of [...DRIVERS, HONO_DRIVER, FETCH_DRIVER]) {
  describeConnectionResets(driver);
  describeQueryBypasses(driver);
  describeDecodingCost(driver);
  if (driver !== FETCH_DRIVER) describeRoutes(driver);
  describeNotFound(driver);
}
