import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * `npm run chaos` at a low rate with a fixed seed (issue 28): its own DynamoDB Local behind the
 * fault-injecting proxy and its own local stack, in a child process, bounded to a few seconds of
 * workload. Figures at the full rate are in the README (Idempotency keys).
 */
function runChaos(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/chaos/run.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.on('exit', (code) => done({ code, stdout, stderr }));
  });
}

describe('npm run chaos', () => {
  it('seed 1 at 10% faults for 5 s: every invariant holds', { timeout: 300_000 }, async () => {
    const { code, stdout, stderr } = await runChaos(['--seed', '1', '--rate', '0.1', '--seconds', '5', '--workers', '4']);
    const summary = JSON.parse(stdout.slice(stdout.indexOf('{')));
    expect(summary.problems, stderr.slice(-2000)).toEqual([]);
    expect(code).toBe(0);
    expect(summary.requests).toBeGreaterThan(0);
    expect(summary.dynamodb_calls).toBeGreaterThan(summary.requests);
  });
});
