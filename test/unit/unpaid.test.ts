import { describe, expect, it } from 'vitest';
import { MINUTES_PER_RUN_MAX, minuteOf, minutesToHandle } from '#lib/domain/unpaid.ts';

const at = (iso: string) => Date.parse(iso);

describe('the minutes the unpaid-order job handles', () => {
  it('handles every fully passed minute after the last one done, never the current one', () => {
    expect(minutesToHandle('2026-11-21T15:01', at('2026-11-21T15:04:30Z'))).toEqual(['2026-11-21T15:02', '2026-11-21T15:03']);
    expect(minutesToHandle('2026-11-21T15:03', at('2026-11-21T15:04:59Z'))).toEqual([]);
  });

  it('looks back an hour on a first run, and catches up at most MINUTES_PER_RUN_MAX minutes a run', () => {
    const first = minutesToHandle(undefined, at('2026-11-21T15:00:10Z'));
    expect([first[0], first.at(-1), first.length]).toEqual(['2026-11-21T14:00', '2026-11-21T14:59', 60]);
    const late = minutesToHandle('2026-11-20T00:00', at('2026-11-21T15:00:00Z'));
    expect([late[0], late.length]).toEqual(['2026-11-20T00:01', MINUTES_PER_RUN_MAX]);
  });

  it('files a moment under its minute', () => {
    expect(minuteOf(at('2026-11-21T15:04:59.999Z'))).toBe('2026-11-21T15:04');
  });
});
