/**
 * Prints one closing line that any CI can read: `tests: N passed, N failed, N skipped`.
 * Jest's own summary ("Tests: 5 passed, 5 total") does not say how many failed when none did.
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const {
      numPassedTests,
      numFailedTests,
      numPendingTests,
      numTodoTests,
      numFailedTestSuites,
      numRuntimeErrorTestSuites,
    } = results;
    const brokenSuites =
      numFailedTestSuites > 0 && numFailedTests === 0 ? numRuntimeErrorTestSuites || numFailedTestSuites : 0;
    process.stderr.write(
      `\ntests: ${numPassedTests} passed, ${numFailedTests + brokenSuites} failed, ${numPendingTests + numTodoTests} skipped\n`,
    );
  }
}
module.exports = SummaryReporter;
