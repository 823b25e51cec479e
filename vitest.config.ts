import { availableParallelism } from 'node:os';
import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

// Development machines run Node 20; Lambda runs a newer runtime. Silence the SDK's notice in every test worker.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// DynamoDB Local's JVMs (the run's stacks, those the tests start, the chaos harness) inherit this. A test
// run's JVM lives minutes and spends most of its CPU compiling itself: with the first JIT tier only and
// the serial collector, 18,000 requests took 9.9 s of CPU instead of 17.6 (start included), and less
// time. Only for tests: `npm start` and the benchmarks keep the JVM's defaults.
process.env.JDK_JAVA_OPTIONS ??= '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC';

/**
 * The files that take longest (tens of seconds, mostly waiting on processes they start or on the
 * stack), started first so that none of them is the run's tail while the other workers sit idle.
 * Vitest orders by the durations it cached from the last run when it has them (a fresh clone has
 * none, and then it runs larger files first: these are small). Only an order: a file missing here
 * runs all the same.
 */
const LONGEST_FIRST = [
  'test/browser/storefront.test.ts',
  'test/integration/local-stack-process.test.ts',
  'test/integration/admin.test.ts',
  'test/integration/chaos.test.ts',
  'test/integration/delivery-cost.test.ts',
  'test/integration/cart-cost.test.ts',
  'test/integration/local-stack-session.test.ts',
  'test/integration/fuzz.test.ts',
  'test/infra/stacks.test.ts',
  'test/integration/delivery.test.ts',
  'test/integration/delivery-agent.test.ts',
  'test/integration/webhook.test.ts',
  'test/infra/operations.test.ts',
  'test/unit/openapi-client.test.ts',
];

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FIRST.indexOf(relative(import.meta.dirname, file.moduleId));
      return index === -1 ? LONGEST_FIRST.length : index;
    };
    // Stable: the rest keep the order vitest gave them.
    return sorted
      .map((file, index) => ({ file, index }))
      .sort((a, b) => rank(a.file) - rank(b.file) || a.index - b.index)
      .map(({ file }) => file);
  }
}

/**
 * Four tiers, one command (`npm test`): unit (no I/O), integration (HTTP against the local
 * stack, started once for the run), browser (the storefront example and /docs in headless
 * Chromium, against a seeded stack of its own), infra (CDK assertions on the synthesized template).
 */
export default defineConfig({
  test: {
    // Vitest's default on 2 CPUs is one worker (CPUs - 1): the files ran one at a time, and an
    // integration file mostly waits on the stack's server and DynamoDB Local, in other processes.
    // Files run in parallel safely: each creates its own stores, and the fakes of the payment
    // providers wait for their port. More than 4 only queues more requests on the one local stack.
    maxWorkers: Math.min(4, availableParallelism() + 1),
    sequence: { sequencer: LongestFirst },
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          globalSetup: ['test/integration/global-setup.ts'],
          setupFiles: ['test/integration/setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          globalSetup: ['test/browser/global-setup.ts'],
          // A page's first load compiles its script and cold-starts handlers: well over the default 1 s on a busy machine.
          expect: { poll: { timeout: 15_000 } },
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      { test: { name: 'infra', include: ['test/infra/**/*.test.ts'], testTimeout: 180_000, hookTimeout: 180_000 } },
    ],
  },
});
