import { describe, expect, it } from 'vitest';
import { parseFaults } from '#infra/local/dynamodb-faults.ts';
import { seededRandom } from '../chaos/proxy.ts';

/** The fault tools of the local stack and of `npm run chaos`. */
describe('x-local-dynamodb-fault', () => {
  it('reads faults, operations and attempt ranges', () => {
    expect(parseFaults('lose-answer:TransactWriteItems:1-3, fail:UpdateItem:2')).toEqual([
      { kind: 'lose-answer', operation: 'TransactWriteItems', from: 1, to: 3 },
      { kind: 'fail', operation: 'UpdateItem', from: 2, to: 2 },
    ]);
    expect(parseFaults('throttle:PutItem:4')).toEqual([{ kind: 'throttle', operation: 'PutItem', from: 4, to: 4 }]);
  });

  it('asks for nothing when absent or malformed (a typo never injects a fault of its own guessing)', () => {
    expect(parseFaults(undefined)).toBeUndefined();
    expect(parseFaults('')).toBeUndefined();
    expect(parseFaults('explode:PutItem:1')).toBeUndefined();
    expect(parseFaults('fail:PutItem')).toBeUndefined();
    expect(parseFaults('fail:PutItem:1,nonsense')).toBeUndefined();
  });
});

describe('the chaos proxy', () => {
  it('replays one sequence of decisions per seed', () => {
    const draw = (seed: number) => Array.from({ length: 5 }, seededRandom(seed));
    expect(draw(7)).toEqual(draw(7));
    expect(draw(7)).not.toEqual(draw(8));
    for (const value of draw(3)) {
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThan(1);
    }
  });
});
