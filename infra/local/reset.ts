import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runningStackPid } from '#infra/local/preflight.ts';

/** `npm run reset`: forget every local store and its data; the downloaded emulator stays. */
const localDir = resolve(process.env.LOCAL_DIR ?? '.local');
const pid = runningStackPid(localDir);
if (pid !== undefined) {
  // Deleting the data folder under a running DynamoDB Local would leave it serving a store that no longer exists on disk.
  console.error(`npm run reset: the local stack is running on ${localDir} (pid ${pid}); stop it (Ctrl-C) and run reset again`);
  process.exit(1);
}
for (const name of ['data', 'demo.json', 'outbox.jsonl', 'stack.pid', 'server-secret.json', 'payment-secrets.key']) rmSync(join(localDir, name), { recursive: true, force: true });
console.log(JSON.stringify({ reset: localDir, kept: join(localDir, 'bin') }));
