import { defineConfig } from 'vitest/config';

// Development machines run Node 20; Lambda runs a newer runtime. Silence the SDK's notice in every test worker.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/**
 * Four tiers, one command (`npm test`): unit (no I/O), integration (HTTP against the local
 * stack, started once for the run), browser (the storefront example and /docs in headless
 * Chromium, against a seeded stack of its own), infra (CDK assertions on the synthesized template).
 */
export default defineConfig({
  test: {
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
