/**
 * Runs in every test file before its tests (jest `setupFilesAfterEnv`): every app the file creates checks each answer
 * against its own OpenAPI document, and a test after which an answer broke its document fails, naming it.
 */
import { afterAll, afterEach } from '@jest/globals';
import { observeResponses } from '../../services/lib/http/index.js';
import { contractCheck, contractViolations } from './contract-check.js';

/** Fails the current test (or the file, at its end) with every violation recorded since the last check. */
function assertNoViolations(): void {
  if (contractViolations.length === 0) return;
  const lines = contractViolations.splice(0);
  throw new Error(`Answers that break their service's OpenAPI document:\n${lines.join('\n')}`);
}

// At once, not in a hook: a test file may create its apps while its modules load.
observeResponses(contractCheck);
afterEach(assertNoViolations);
afterAll(() => {
  assertNoViolations();
  observeResponses(undefined);
});
