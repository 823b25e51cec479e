import { startLocalStack } from '#infra/local/stack.ts';
import { freePort } from '../support/ports.ts';

/** A local stack of its own for one benchmark: in memory, unseeded, on free ports, its files in `localDir`. */
export async function startBenchStack(localDir: string) {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  return startLocalStack({
    inMemory: true,
    seedDemo: false,
    port: await freePort(),
    dynamodbPort: await freePort(),
    s3Port: await freePort(),
    localDir,
    binDir: '.local/bin',
  });
}
