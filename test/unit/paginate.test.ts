import { describe, expect, it } from 'vitest';
import { pageAnswer, pageMeta, paginate } from '#lib/http/paginate.ts';

const at = (query: Record<string, string> = {}) => ({ path: '/v1/app/discount', query });

describe('paginate', () => {
  const items = Array.from({ length: 45 }, (_, i) => i + 1);

  it('slices the requested page and gives the full meta', () => {
    const page = paginate(items, 2, 20, at({ page: '2', limit: '20', status: 'ACTIVE' }));
    expect(page.data).toEqual(items.slice(20, 40));
    expect(page.meta).toEqual({
      total: 45,
      per_page: 20,
      current_page: 2,
      last_page: 3,
      first_page: 1,
      first_page_url: '/v1/app/discount?page=1&limit=20&status=ACTIVE',
      last_page_url: '/v1/app/discount?page=3&limit=20&status=ACTIVE',
      next_page_url: '/v1/app/discount?page=3&limit=20&status=ACTIVE',
      previous_page_url: '/v1/app/discount?page=1&limit=20&status=ACTIVE',
    });
  });

  it('has no neighbours on a single page, and last_page 1 when empty', () => {
    expect(paginate([], 1, 20, at()).meta).toMatchObject({ total: 0, last_page: 1, next_page_url: null, previous_page_url: null });
    expect(paginate([1, 2], 1, 20, at()).meta).toMatchObject({ last_page: 1, next_page_url: null, previous_page_url: null });
  });

  it('answers an empty page past the last one, pointing back to the last page', () => {
    const page = paginate(items, 7, 20, at());
    expect(page.data).toEqual([]);
    expect(page.meta).toMatchObject({ current_page: 7, last_page: 3, next_page_url: null, previous_page_url: '/v1/app/discount?page=3&limit=20' });
  });

  it('answers a page cut elsewhere (the chat cuts its own) with the meta a sliced list gets', () => {
    const page = pageAnswer({ total: 45, data: ['a', 'b'] }, 2, 20, at({ page: '2', status: 'ACTIVE' }));
    expect(page).toEqual({ meta: paginate(items, 2, 20, at({ page: '2', status: 'ACTIVE' })).meta, data: ['a', 'b'] });
  });

  it('encodes filter values and leaves limit out for fixed-size endpoints', () => {
    const meta = pageMeta(30, 1, 15, { path: '/v1/webstore/affiliate/transactions', query: { coupon: 'a b&c' } }, { fixedLimit: true });
    expect(meta.next_page_url).toBe('/v1/webstore/affiliate/transactions?page=2&coupon=a+b%26c');
  });
});
