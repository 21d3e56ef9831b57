/**
 * Prints one closing line that any CI can read: `tests: N passed, N failed, N skipped`.
 * Jest's own summary ("Tests: 5 passed, 5 total") does not say how many failed when none did.
 * Written when the process exits, so it comes after jest's summary.
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const { numPassedTests, numFailedTests, numPendingTests, numTodoTests, numFailedTestSuites } = results;
    // A suite that failed to load has no failed test of its own: count it as one failure.
    const brokenSuites = numFailedTestSuites > 0 && numFailedTests === 0 ? numFailedTestSuites : 0;
    const line = `tests: ${numPassedTests} passed, ${numFailedTests + brokenSuites} failed, ${numPendingTests + numTodoTests} skipped\n`;
    process.once('exit', () => process.stderr.write(line));
  }
}
module.exports = SummaryReporter;
