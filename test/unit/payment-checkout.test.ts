import { describe, expect, it } from 'vitest';
import { gatewayChoices, returnUrlAllowed } from '#lib/domain/payment-checkout.ts';

describe('the gateways a buyer may choose', () => {
  it("lists the enabled accounts' gateways in a fixed order, in the clients' shape", () => {
    const choices = gatewayChoices(
      [
        { provider: 'test', enabled: true, gateways: ['TEST'] },
        { provider: 'mercadopago', enabled: true, gateways: ['MERCADOPAGO', 'PIX'] },
      ],
      true,
    );
    expect(choices).toEqual([
      { gateway: 'PIX', display: 'PIX', name: 'pix', fee: 0, is_percentage_fee: false },
      { gateway: 'MERCADOPAGO', display: 'Mercado Pago', name: 'mercadopago', fee: 0, is_percentage_fee: false },
      { gateway: 'TEST', display: 'Test payment', name: 'test', fee: 0, is_percentage_fee: false },
    ]);
  });

  it('leaves out a disabled account, TEST where the stage does not allow it, and a gateway under the wrong provider', () => {
    expect(gatewayChoices([{ provider: 'mercadopago', enabled: false, gateways: ['PIX'] }], true)).toEqual([]);
    expect(gatewayChoices([{ provider: 'test', enabled: true, gateways: ['TEST'] }], false)).toEqual([]);
    expect(gatewayChoices([{ provider: 'stripe', enabled: true, gateways: ['PIX'] }], true)).toEqual([]);
  });
});

describe('where a redirect checkout may send the buyer back', () => {
  const store = { domain: 'shop.example.com', allowed_origins: ['https://play.example.net', 'http://insecure.example.org'] };

  it.each(['https://shop.example.com/thanks?order=1', 'https://shop.example.com', 'https://play.example.net/return'])('allows %s', (url) =>
    expect(returnUrlAllowed(url, store, false)).toBe(true),
  );

  it.each([
    ['another host', 'https://evil.example.com/'],
    ['a host that only ends like the domain', 'https://evilshop.example.com/'],
    ['a subdomain of it', 'https://a.shop.example.com/'],
    ['plain http', 'http://shop.example.com/'],
    ['an allowed origin over http', 'http://insecure.example.org/'],
    ['another port', 'https://shop.example.com:8443/'],
    ['user info', 'https://user:pass@shop.example.com/'],
    ['a javascript URL', 'javascript:alert(1)'],
    ['a relative path', '/thanks'],
    ['a protocol-relative URL', '//evil.example.com/'],
    ['a URL over 2048 characters', `https://shop.example.com/${'a'.repeat(2048)}`],
  ])('refuses %s', (_, url) => expect(returnUrlAllowed(url, store, false)).toBe(false));

  it('allows plain http on the store domain, any port, only on the local stack', () => {
    expect(returnUrlAllowed('http://shop.example.com:3000/return', store, true)).toBe(true);
    expect(returnUrlAllowed('http://shop.example.com:3000/return', store, false)).toBe(false);
    expect(returnUrlAllowed('http://evil.localhost:3000/', store, true)).toBe(false);
  });
});
