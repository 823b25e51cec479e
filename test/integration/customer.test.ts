import { describe, expect, it } from 'vitest';
import { buyerLogin } from '../support/buyer.ts';
import { atTime, firstError, newStore } from '../support/client.ts';

describe('GET|PATCH /v1/webstore/customer/me', () => {
  it('changes only the fields sent and moves updated_at', async () => {
    const store = await newStore();
    const buyer = await buyerLogin(store.domain);
    const res = await buyer.patch(
      '/v1/webstore/customer/me',
      { name: 'Ana Souza', avatar: 'https://cdn.example.com/a.png', social_id: '1234567890' },
      atTime(buyer.customer.updated_at, 1000),
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...buyer.customer,
      name: 'Ana Souza',
      avatar: 'https://cdn.example.com/a.png',
      social_id: '1234567890',
      updated_at: expect.any(String),
    });
    expect(res.body.updated_at > buyer.customer.updated_at).toBe(true);
    const cleared = await buyer.patch('/v1/webstore/customer/me', { avatar: null });
    expect(cleared.body).toMatchObject({ name: 'Ana Souza', avatar: null, social_id: '1234567890', email: buyer.email });
    expect((await buyer.get('/v1/webstore/customer/me')).body).toEqual(cleared.body);
  });

  it.each([
    ['an empty patch', {}, undefined],
    ['an empty name', { name: '  ' }, 'name'],
    ['a name over 100 characters', { name: 'x'.repeat(101) }, 'name'],
    ['a javascript: avatar', { avatar: 'javascript:alert(1)' }, 'avatar'],
    ['an avatar that is no URL', { avatar: 'me.png' }, 'avatar'],
    ['a numeric social_id', { social_id: 42 }, 'social_id'],
    ['the e-mail (identity, not editable)', { email: 'other@example.com' }, 'email'],
    ['an unknown field', { id: 9 }, 'id'],
  ])('rejects %s with 422 and changes nothing', async (_case, body, field) => {
    const store = await newStore();
    const buyer = await buyerLogin(store.domain);
    const res = await buyer.patch('/v1/webstore/customer/me', body);
    expect(res.status).toBe(422);
    expect(firstError(res)).toMatchObject({ code: 'VALIDATION_FAILED', ...(field ? { field } : {}) });
    expect((await buyer.get('/v1/webstore/customer/me')).body).toEqual(buyer.customer);
  });

  it('answers 401 CUSTOMER_UNAUTHENTICATED without a valid token, changing nothing', async () => {
    const store = await newStore();
    const buyer = await buyerLogin(store.domain);
    const res = await store.patch('/v1/webstore/customer/me', { name: 'Hacker' }, { headers: { 'x-store-domain': store.domain } });
    expect(res.status).toBe(401);
    expect(firstError(res).code).toBe('CUSTOMER_UNAUTHENTICATED');
    expect((await buyer.get('/v1/webstore/customer/me')).body.name).toBe(buyer.customer.name);
  });
});
