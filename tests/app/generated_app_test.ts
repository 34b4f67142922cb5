/**
 * Runs the tests the scaffold writes into new projects (examples/app/app_test.ts)
 * as part of this repository's suite.
 */
import "../../examples/app/app_test.ts";
