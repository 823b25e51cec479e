import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** `npm run reset`: forget every local store and its data; the downloaded emulator stays. */
const localDir = resolve(process.env.LOCAL_DIR ?? '.local');
for (const name of ['data', 'demo.json', 'outbox.jsonl']) rmSync(join(localDir, name), { recursive: true, force: true });
console.log(JSON.stringify({ reset: localDir, kept: join(localDir, 'bin') }));
