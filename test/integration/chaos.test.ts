import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * `npm run chaos` at a low rate with a fixed seed (issue 28): its own DynamoDB Local behind the
 * fault-injecting proxy and its own local stack, in a child process, bounded to a few seconds of
 * workload (about 20 s in all; 30 s when a claim's answer was lost and its lease must lapse).
 * The rules themselves are tested in test/unit/chaos-invariants.test.ts; figures at the full
 * rate are in docs/contributing.md (Faults and the chaos harness).
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
  it('seed 1 at 10% faults for 5 s: every invariant holds and nothing is doubled or lost after the retry', { timeout: 300_000 }, async () => {
    const { code, stdout, stderr } = await runChaos(['--seed', '1', '--rate', '0.1', '--seconds', '5', '--workers', '4', '--lease', '10']);
    const summary = JSON.parse(stdout.slice(stdout.indexOf('{')));
    expect(summary.problems, stderr.slice(-2000)).toEqual([]);
    expect(summary.rules).toHaveLength(13);
    for (const rule of summary.rules) expect(rule).toMatch(/^ok /);
    expect(summary.figures.after_retry).toMatchObject({ '409 key in use': 0, '502 and other answers outside the envelope': 0, 'orders doubled': 0, 'requests lost': 0 });
    expect(code).toBe(0);
    // The workload ran every kind of request against a DynamoDB that faulted.
    expect(Object.keys(summary.requests_by_kind).sort()).toEqual(expect.arrayContaining(['approve', 'checkout', 'order']));
    expect(summary.claims).toBeGreaterThan(0);
    expect(Object.values(summary.faults as Record<string, number>).reduce((sum, n) => sum + n, 0)).toBeGreaterThan(0);
    expect(summary.dynamodb_calls).toBeGreaterThan(summary.requests);
  });
});
