import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { dynamoDbCalls, firstError, newStore } from '../support/client.ts';
import { createPackage as buildPackage, type Store } from '../support/builders.ts';

/**
 * Package images over HTTP against the local stack and its S3 emulator (s3rver): what is stored,
 * under which key and type, what is deleted, and what a refused upload leaves behind (nothing).
 */

const BASE_URL = `${inject('s3Endpoint')}/${inject('bucket')}`;
const s3 = new S3Client({
  endpoint: inject('s3Endpoint'),
  region: 'us-east-1',
  forcePathStyle: true,
  credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});
afterAll(() => s3.destroy());

const MB = 1024 * 1024;
const bytes = (...values: number[]) => Buffer.from(values);
const IMAGES = {
  png: Buffer.concat([bytes(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a), Buffer.from('IHDR-png-body')]),
  jpg: Buffer.concat([bytes(0xff, 0xd8, 0xff, 0xe0), Buffer.from('JFIF-jpeg-body')]),
  gif: Buffer.from('GIF89a-gif-body'),
  webp: Buffer.concat([Buffer.from('RIFF'), bytes(0x20, 0, 0, 0), Buffer.from('WEBPVP8 webp-body')]),
  svg: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'),
  xmlSvg: Buffer.from('\ufeff<?xml version="1.0" encoding="UTF-8"?>\n<!-- logo -->\n<svg xmlns="http://www.w3.org/2000/svg"></svg>'),
};

interface Part {
  name: string;
  filename?: string;
  contentType?: string;
  data: Buffer | string;
}

/** A multipart/form-data body, as a browser or curl -F sends it. */
function form(parts: Part[], boundary = `----store-api-test-${Math.random().toString(16).slice(2)}`) {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`;
    const headers = `Content-Disposition: ${disposition}\r\n${part.contentType ? `Content-Type: ${part.contentType}\r\n` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\n${headers}\r\n`), Buffer.from(part.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { raw: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

const upload = (store: Store, packageId: number, filename: string, data: Buffer | string, contentType = 'application/octet-stream') =>
  store.put(`/v1/app/package/${packageId}/image`, undefined, form([{ name: 'file', filename, contentType, data }]));

const createPackage = (store: Store) => buildPackage(store, { name: 'Package', price: 1 });

/** The keys stored under a package's prefix, read from the emulator itself. */
async function storedKeys(storeId: number, packageId?: number): Promise<string[]> {
  const prefix = `packages/${storeId}/${packageId === undefined ? '' : `${packageId}/`}`;
  const listed = await s3.send(new ListObjectsV2Command({ Bucket: inject('bucket'), Prefix: prefix }));
  return (listed.Contents ?? []).map((object) => object.Key!).sort();
}

/** A public GET of an image URL, as a browser would load it. */
async function fetchImage(url: string) {
  const res = await fetch(url);
  return { status: res.status, contentType: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
}

const keyOf = (url: string) => url.slice(BASE_URL.length + 1);

describe('PUT /v1/app/package/{packageId}/image', () => {
  it('stores the file under a new key of the package, answers {url}, and GET package shows it', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const res = await upload(store, pkg.id, 'logo.png', IMAGES.png, 'image/png');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ url: expect.stringMatching(new RegExp(`^${BASE_URL}/packages/${store.storeId}/${pkg.id}/[A-Za-z0-9_-]{22}\\.png$`)) });
    const after = (await store.get(`/v1/app/package/${pkg.id}`)).body;
    expect(after.image).toBe(res.body.url);
    expect(after.updated_at > pkg.updated_at).toBe(true);
    const image = await fetchImage(res.body.url);
    expect(image).toMatchObject({ status: 200, contentType: 'image/png' });
    expect(image.body.equals(IMAGES.png)).toBe(true);
    expect(await storedKeys(store.storeId, pkg.id)).toEqual([keyOf(res.body.url)]);
  });

  it.each([
    ['photo.jpg', IMAGES.jpg, 'image/jpeg', 'jpg'],
    ['photo.JPEG', IMAGES.jpg, 'image/jpeg', 'jpg'],
    ['anim.gif', IMAGES.gif, 'image/gif', 'gif'],
    ['pic.webp', IMAGES.webp, 'image/webp', 'webp'],
    ['icon.svg', IMAGES.svg, 'image/svg+xml', 'svg'],
    ['logo.svg', IMAGES.xmlSvg, 'image/svg+xml', 'svg'],
  ])('accepts %s and stores it with Content-Type %s', async (filename, content, contentType, extension) => {
    const store = await newStore();
    const pkg = await createPackage(store);
    // The declared part type is not trusted: extension and bytes decide.
    const res = await upload(store, pkg.id, filename, content, 'application/octet-stream');
    expect(res.status).toBe(200);
    expect(res.body.url.endsWith(`.${extension}`)).toBe(true);
    const image = await fetchImage(res.body.url);
    expect(image.status).toBe(200);
    expect(image.contentType).toBe(contentType);
    expect(image.body.equals(content)).toBe(true);
  });

  it('replaces the image: a new key each time, and the replaced object is deleted from the bucket', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const first = (await upload(store, pkg.id, 'a.png', IMAGES.png)).body.url;
    const second = await upload(store, pkg.id, 'b.gif', IMAGES.gif);
    expect(second.status).toBe(200);
    expect(second.body.url).not.toBe(first);
    expect((await fetchImage(first)).status).toBe(404);
    expect((await fetchImage(second.body.url)).status).toBe(200);
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.image).toBe(second.body.url);
    expect(await storedKeys(store.storeId, pkg.id)).toEqual([keyOf(second.body.url)]);
  });

  it('keeps exactly one object, the one the package shows, when uploads race', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const results = await Promise.all(['a.png', 'b.gif', 'c.jpg', 'd.webp'].map((name, i) => upload(store, pkg.id, name, [IMAGES.png, IMAGES.gif, IMAGES.jpg, IMAGES.webp][i]!)));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const image = (await store.get(`/v1/app/package/${pkg.id}`)).body.image;
    expect(await storedKeys(store.storeId, pkg.id)).toEqual([keyOf(image)]);
  });

  it.each([
    ['an extension outside the list', 'image.bmp', IMAGES.png, 'UNSUPPORTED_FILE_TYPE'],
    ['no extension', 'image', IMAGES.png, 'UNSUPPORTED_FILE_TYPE'],
    ['a text file', 'notes.txt', 'hello', 'UNSUPPORTED_FILE_TYPE'],
    ['JPEG bytes named .png', 'fake.png', IMAGES.jpg, 'FILE_CONTENT_MISMATCH'],
    ['PNG bytes named .jpg', 'fake.jpg', IMAGES.png, 'FILE_CONTENT_MISMATCH'],
    ['GIF bytes named .webp', 'fake.webp', IMAGES.gif, 'FILE_CONTENT_MISMATCH'],
    ['a RIFF that is not WebP named .webp', 'fake.webp', Buffer.concat([Buffer.from('RIFF'), bytes(0, 0, 0, 0), Buffer.from('WAVEfmt ')]), 'FILE_CONTENT_MISMATCH'],
    ['PNG bytes named .svg', 'fake.svg', IMAGES.png, 'FILE_CONTENT_MISMATCH'],
    ['HTML named .svg', 'page.svg', '<html><script>alert(1)</script></html>', 'FILE_CONTENT_MISMATCH'],
    ['an XML document without <svg> named .svg', 'data.svg', '<?xml version="1.0"?><root/>', 'FILE_CONTENT_MISMATCH'],
    ['SVG text named .png', 'vector.png', IMAGES.svg, 'FILE_CONTENT_MISMATCH'],
  ])('refuses %s with 415, storing and changing nothing', async (_case, filename, content, code) => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const current = (await upload(store, pkg.id, 'current.png', IMAGES.png)).body.url;
    const res = await upload(store, pkg.id, filename, content, 'image/png');
    expect(res.status).toBe(415);
    expect(firstError(res)).toMatchObject({ code, field: 'file' });
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.image).toBe(current);
    expect(await storedKeys(store.storeId, pkg.id)).toEqual([keyOf(current)]);
  });

  it('refuses a file over 10 MB with 413 in the envelope, storing nothing; a file just under the limit is stored', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const oversize = await upload(store, pkg.id, 'huge.png', Buffer.concat([IMAGES.png, Buffer.alloc(10 * MB + 1 - IMAGES.png.length)]));
    expect(oversize.status).toBe(413);
    expect(firstError(oversize).code).toBe('PAYLOAD_TOO_LARGE');
    expect(await storedKeys(store.storeId, pkg.id)).toEqual([]);
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.image).toBeNull();
    // The whole request (file + multipart framing) must stay within the 10 MB API Gateway allows.
    const large = Buffer.concat([IMAGES.png, Buffer.alloc(10 * MB - 1024 - IMAGES.png.length)]);
    const res = await upload(store, pkg.id, 'large.png', large);
    expect(res.status).toBe(200);
    expect((await fetchImage(res.body.url)).body.length).toBe(large.length);
  });

  it.each([
    ['no file part', () => form([{ name: 'other', data: 'x' }]), 422, 'other'],
    ['a form with no parts', () => form([]), 422, 'file'],
    ['an empty body', () => ({ raw: Buffer.alloc(0), contentType: 'multipart/form-data; boundary=abc' }), 422, 'file'],
    ['a file part without a filename', () => form([{ name: 'file', data: IMAGES.png }]), 422, 'file'],
    [
      'two file parts',
      () =>
        form([
          { name: 'file', filename: 'a.png', data: IMAGES.png },
          { name: 'file', filename: 'b.png', data: IMAGES.png },
        ]),
      422,
      'file',
    ],
    [
      'a file and another part',
      () =>
        form([
          { name: 'file', filename: 'a.png', data: IMAGES.png },
          { name: 'caption', data: 'hi' },
        ]),
      422,
      'caption',
    ],
    ['an empty file', () => form([{ name: 'file', filename: 'a.png', data: '' }]), 422, 'file'],
  ])('refuses %s with %i naming the part, storing nothing', async (_case, body, status, field) => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const { raw, contentType } = body();
    const res = await store.put(`/v1/app/package/${pkg.id}/image`, undefined, { raw, contentType });
    expect(res.status).toBe(status);
    expect(firstError(res).field).toBe(field);
    expect(await storedKeys(store.storeId, pkg.id)).toEqual([]);
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.image).toBeNull();
  });

  it('answers 415 to a body that is not multipart/form-data and 400 to a malformed multipart body, storing nothing', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const path = `/v1/app/package/${pkg.id}/image`;
    const json = await store.put(path, { file: 'aGVsbG8=' });
    expect(json.status).toBe(415);
    expect(firstError(json).code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect((await store.put(path, undefined, { raw: IMAGES.png, contentType: 'image/png' })).status).toBe(415);
    expect((await store.put(path)).status).toBe(415);
    const noBoundary = await store.put(path, undefined, { raw: form([{ name: 'file', filename: 'a.png', data: IMAGES.png }]).raw, contentType: 'multipart/form-data' });
    expect(noBoundary.status).toBe(400);
    expect(firstError(noBoundary).code).toBe('INVALID_MULTIPART');
    const { raw, contentType } = form([{ name: 'file', filename: 'a.png', data: IMAGES.png }]);
    const truncated = await store.put(path, undefined, { raw: raw.subarray(0, raw.length - 30), contentType });
    expect(truncated.status).toBe(400);
    expect(firstError(truncated).code).toBe('INVALID_MULTIPART');
    const otherBoundary = await store.put(path, undefined, { raw, contentType: 'multipart/form-data; boundary=not-the-one' });
    expect(otherBoundary.status).toBe(400);
    expect(await storedKeys(store.storeId, pkg.id)).toEqual([]);
  });

  it("answers 404 for a missing package and for another store's package, storing nothing in either store", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const pkg = await createPackage(a);
    const missing = await upload(a, 999, 'a.png', IMAGES.png);
    expect(missing.status).toBe(404);
    expect(firstError(missing).code).toBe('NOT_FOUND');
    const foreign = await upload(b, pkg.id, 'a.png', IMAGES.png);
    expect(foreign.status).toBe(404);
    expect((await upload(a, 0, 'a.png', IMAGES.png)).status).toBe(404);
    expect(await storedKeys(a.storeId)).toEqual([]);
    expect(await storedKeys(b.storeId)).toEqual([]);
    expect((await a.get(`/v1/app/package/${pkg.id}`)).body).toEqual(pkg);
  });

  it('needs an operator token', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const { raw, contentType } = form([{ name: 'file', filename: 'a.png', data: IMAGES.png }]);
    expect((await store.as('sat_nope').put(`/v1/app/package/${pkg.id}/image`, undefined, { raw, contentType })).status).toBe(401);
    expect(await storedKeys(store.storeId)).toEqual([]);
  });

  it('is cleared by PATCH image: null, which deletes its object', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const url = (await upload(store, pkg.id, 'a.png', IMAGES.png)).body.url;
    expect((await fetchImage(url)).status).toBe(200);
    const cleared = await store.patch(`/v1/app/package/${pkg.id}`, { image: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body.image).toBeNull();
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.image).toBeNull();
    expect((await fetchImage(url)).status).toBe(404);
    expect(await storedKeys(store.storeId, pkg.id)).toEqual([]);
  });

  it('keeps the other fields of a PATCH that also removes the image', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    await upload(store, pkg.id, 'a.gif', IMAGES.gif);
    const res = await store.patch(`/v1/app/package/${pkg.id}`, { image: null, name: 'Renamed', price: 3 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ image: null, name: 'Renamed', price: 3 });
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body).toEqual(res.body);
    expect(await storedKeys(store.storeId, pkg.id)).toEqual([]);
  });

  it('stays, object included, when the rest of a PATCH that also removes it is refused', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const url = (await upload(store, pkg.id, 'a.png', IMAGES.png)).body.url;
    for (const body of [
      { image: null, category_id: 999 },
      { image: null, parent_id: pkg.id },
    ]) {
      const res = await store.patch(`/v1/app/package/${pkg.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect((await store.get(`/v1/app/package/${pkg.id}`)).body.image).toBe(url);
      expect((await fetchImage(url)).status).toBe(200);
    }
  });

  it('goes with its package: deleting the package deletes the object', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const url = (await upload(store, pkg.id, 'a.webp', IMAGES.webp)).body.url;
    expect((await store.delete(`/v1/app/package/${pkg.id}`)).status).toBe(204);
    expect((await fetchImage(url)).status).toBe(404);
    expect(await storedKeys(store.storeId, pkg.id)).toEqual([]);
  });

  it('stays when the package cannot be deleted (409)', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const url = (await upload(store, pkg.id, 'a.png', IMAGES.png)).body.url;
    const variation = await store.post('/v1/app/package', { name: 'Variation', price: 1, parent_id: pkg.id });
    expect(variation.status).toBe(200);
    expect((await store.delete(`/v1/app/package/${pkg.id}`)).status).toBe(409);
    expect((await fetchImage(url)).status).toBe(200);
  });
});

/** Sends a presigned POST to the bucket, as a browser form would (fields first, the file last). */
async function postToBucket(presigned: { url: string; fields: Record<string, string> }, content: Buffer, fieldOverrides: Record<string, string> = {}) {
  const body = new FormData();
  for (const [name, value] of Object.entries({ ...presigned.fields, ...fieldOverrides })) body.append(name, value);
  body.append('file', new Blob([content]), 'upload.bin');
  const res = await fetch(presigned.url, { method: 'POST', body });
  return res.status;
}

describe('POST /v1/app/package/{packageId}/image/upload and /image/confirm', () => {
  const presign = (store: Store, packageId: number, contentType = 'image/png') => store.post(`/v1/app/package/${packageId}/image/upload`, { content_type: contentType });
  const confirm = (store: Store, packageId: number, key: string) => store.post(`/v1/app/package/${packageId}/image/confirm`, { key });

  it('returns a presigned POST bound to a fresh key, the type and 1 byte..10 MB, then confirm makes it the image', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const res = await presign(store, pkg.id, 'image/png');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      url: `${BASE_URL}`,
      fields: expect.objectContaining({ key: res.body.key, 'Content-Type': 'image/png', Policy: expect.any(String), 'X-Amz-Signature': expect.any(String) }),
      key: expect.stringMatching(new RegExp(`^packages/${store.storeId}/${pkg.id}/[A-Za-z0-9_-]{22}\\.png$`)),
      expires_in: 300,
    });
    const policy = JSON.parse(Buffer.from(res.body.fields.Policy, 'base64').toString('utf8'));
    expect(policy.conditions).toEqual(
      expect.arrayContaining([['content-length-range', 1, 10 * MB], ['eq', '$Content-Type', 'image/png'], { key: res.body.key }, { bucket: inject('bucket') }]),
    );
    expect(Date.parse(policy.expiration) - Date.now()).toBeLessThanOrEqual(300_000);
    expect((await presign(store, pkg.id)).body.key).not.toBe(res.body.key);
    // Nothing changes until the confirm.
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.image).toBeNull();

    expect(await postToBucket(res.body, IMAGES.png)).toBeLessThan(300);
    const confirmed = await confirm(store, pkg.id, res.body.key);
    expect(confirmed.status).toBe(200);
    expect(confirmed.body).toEqual({ url: `${BASE_URL}/${res.body.key}` });
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.image).toBe(confirmed.body.url);
    expect(await fetchImage(confirmed.body.url)).toMatchObject({ status: 200, contentType: 'image/png' });
    // Confirming the same key again changes nothing and deletes nothing.
    expect((await confirm(store, pkg.id, res.body.key)).body).toEqual(confirmed.body);
    expect((await fetchImage(confirmed.body.url)).status).toBe(200);
  });

  it('maps each type to its key extension', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    for (const [type, extension] of [
      ['image/jpeg', 'jpg'],
      ['image/gif', 'gif'],
      ['image/webp', 'webp'],
      ['image/svg+xml', 'svg'],
      ['IMAGE/PNG', 'png'],
    ]) {
      const res = await presign(store, pkg.id, type);
      expect(res.status).toBe(200);
      expect(res.body.key.endsWith(`.${extension}`)).toBe(true);
      expect(res.body.fields['Content-Type']).toBe(type!.toLowerCase());
    }
  });

  it('deletes the replaced image once the package points to the confirmed one', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const old = (await upload(store, pkg.id, 'old.gif', IMAGES.gif)).body.url;
    const post = (await presign(store, pkg.id, 'image/svg+xml')).body;
    await postToBucket(post, IMAGES.svg);
    const confirmed = await confirm(store, pkg.id, post.key);
    expect(confirmed.status).toBe(200);
    expect((await fetchImage(old)).status).toBe(404);
    expect(await fetchImage(confirmed.body.url)).toMatchObject({ status: 200, contentType: 'image/svg+xml' });
    expect(await storedKeys(store.storeId, pkg.id)).toEqual([post.key]);
  });

  it('refuses a content type outside the list (415), a missing one (422), a missing or foreign package (404)', async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const pkg = await createPackage(a);
    const bmp = await presign(a, pkg.id, 'image/bmp');
    expect(bmp.status).toBe(415);
    expect(firstError(bmp)).toMatchObject({ code: 'UNSUPPORTED_FILE_TYPE', field: 'content_type' });
    expect((await presign(a, pkg.id, 'text/html')).status).toBe(415);
    const missingField = await a.post(`/v1/app/package/${pkg.id}/image/upload`, {});
    expect(missingField.status).toBe(422);
    expect(firstError(missingField).field).toBe('content_type');
    expect((await a.post(`/v1/app/package/${pkg.id}/image/upload`, { content_type: 'image/png', key: 'x' })).status).toBe(422);
    expect((await presign(a, 999)).status).toBe(404);
    expect((await presign(b, pkg.id)).status).toBe(404);
  });

  it("refuses to confirm a key that is not one of this package's (422), or under which nothing was uploaded (422), changing nothing", async () => {
    const a = await newStore('A');
    const b = await newStore('B');
    const pkg = await createPackage(a);
    const other = await createPackage(a);
    const post = (await presign(a, pkg.id)).body;
    await postToBucket(post, IMAGES.png);
    for (const key of [post.key.replace(`/${pkg.id}/`, `/${other.id}/`), `packages/${a.storeId}/${pkg.id}/../${other.id}/x.png`, 'elsewhere/a.png', '']) {
      const res = await confirm(a, pkg.id, key);
      expect(res.status, key).toBe(422);
      expect(firstError(res).field).toBe('key');
    }
    // Another store's package of the same id: not its key.
    const foreign = await createPackage(b);
    expect(foreign.id).toBe(pkg.id);
    expect((await confirm(b, foreign.id, post.key)).status).toBe(422);
    const notUploaded = await confirm(a, pkg.id, (await presign(a, pkg.id)).body.key);
    expect(notUploaded.status).toBe(422);
    expect(firstError(notUploaded).message).toContain('No file was uploaded');
    expect((await a.get(`/v1/app/package/${pkg.id}`)).body.image).toBeNull();
    expect((await b.get(`/v1/app/package/${foreign.id}`)).body.image).toBeNull();
    expect(await storedKeys(a.storeId, pkg.id)).toEqual([post.key]);
  });

  // s3rver does not enforce POST policies (AWS does): what it lets through, the confirm refuses and deletes.
  it.each([
    ['bytes that are not the declared type (415)', IMAGES.jpg, {}, 415, 'FILE_CONTENT_MISMATCH'],
    ["another Content-Type than the key's (415)", IMAGES.gif, { 'Content-Type': 'image/gif' }, 415, 'UNSUPPORTED_FILE_TYPE'],
    ['an object over 10 MB (413)', Buffer.concat([IMAGES.png, Buffer.alloc(10 * MB)]), {}, 413, 'PAYLOAD_TOO_LARGE'],
  ])('refuses at confirm %s, deletes the object and keeps the current image', async (_case, content, overrides, status, code) => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const current = (await upload(store, pkg.id, 'current.webp', IMAGES.webp)).body.url;
    const post = (await presign(store, pkg.id, 'image/png')).body;
    expect(await postToBucket(post, content, overrides)).toBeLessThan(300);
    const res = await confirm(store, pkg.id, post.key);
    expect(res.status).toBe(status);
    expect(firstError(res)).toMatchObject({ code, field: 'key' });
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.image).toBe(current);
    expect(await storedKeys(store.storeId, pkg.id)).toEqual([keyOf(current)]);
  });

  it('answers 404 when the package was deleted before the confirm, and deletes the uploaded object', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const post = (await presign(store, pkg.id)).body;
    await postToBucket(post, IMAGES.png);
    expect((await store.delete(`/v1/app/package/${pkg.id}`)).status).toBe(204);
    const res = await confirm(store, pkg.id, post.key);
    expect(res.status).toBe(404);
    expect(await storedKeys(store.storeId, pkg.id)).toEqual([]);
  });

  it('reads the content check from the first bytes only: an SVG whose <svg> comes late is refused', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const key = (await presign(store, pkg.id, 'image/svg+xml')).body.key;
    const late = `<?xml version="1.0"?>\n<!--${' '.repeat(5000)}-->\n<svg xmlns="http://www.w3.org/2000/svg"/>`;
    await s3.send(new PutObjectCommand({ Bucket: inject('bucket'), Key: key, Body: late, ContentType: 'image/svg+xml' }));
    expect((await confirm(store, pkg.id, key)).status).toBe(415);
  });
});

describe('DynamoDB calls per request (credential GetItem included)', () => {
  it('image endpoints', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    // the package's GetItem (it exists: its tags are not shown; nothing is stored for a missing
    // package), then the conditional UpdateItem
    expect(dynamoDbCalls(await upload(store, pkg.id, 'a.png', IMAGES.png))).toBe(3);
    expect(dynamoDbCalls(await upload(store, pkg.id, 'a.png', IMAGES.jpg))).toBe(1);
    expect(dynamoDbCalls(await upload(store, 999, 'a.png', IMAGES.png))).toBe(2);
    const post = await store.post(`/v1/app/package/${pkg.id}/image/upload`, { content_type: 'image/gif' });
    expect(dynamoDbCalls(post)).toBe(2);
    await postToBucket(post.body, IMAGES.gif);
    // S3 checks, then the one UpdateItem
    expect(dynamoDbCalls(await store.post(`/v1/app/package/${pkg.id}/image/confirm`, { key: post.body.key }))).toBe(2);
    expect(dynamoDbCalls(await store.post(`/v1/app/package/${pkg.id}/image/confirm`, { key: 'nope' }))).toBe(1);
  });
});

describe('an image confirm whose answer was lost (issue 28)', () => {
  it('runs again on the retry with the same key: the same image, its object kept (the same key confirmed twice replaces nothing)', async () => {
    const store = await newStore();
    const pkg = await createPackage(store);
    const presigned = await store.post(`/v1/app/package/${pkg.id}/image/upload`, { content_type: 'image/png' });
    expect(await postToBucket(presigned.body, IMAGES.png)).toBeLessThan(300);
    const key = `confirm-${process.pid}-${Math.random().toString(36).slice(2)}`;
    // UpdateItem 1 is the claim; 2-4 the package's image and the SDK's retries of it, each landed with its answer lost.
    const lost = await store.post(
      `/v1/app/package/${pkg.id}/image/confirm`,
      { key: presigned.body.key },
      { headers: { 'idempotency-key': key, 'x-local-dynamodb-fault': 'lose-answer:UpdateItem:2-4' } },
    );
    expect(lost.status, lost.text).toBe(503);
    const retried = await store.post(`/v1/app/package/${pkg.id}/image/confirm`, { key: presigned.body.key }, { headers: { 'idempotency-key': key } });
    expect(retried.status, retried.text).toBe(200);
    expect(retried.body).toEqual({ url: `${BASE_URL}/${presigned.body.key}` });
    expect((await store.get(`/v1/app/package/${pkg.id}`)).body.image).toBe(retried.body.url);
    expect((await fetchImage(retried.body.url)).status).toBe(200);
    expect(await storedKeys(store.storeId, pkg.id)).toEqual([presigned.body.key]);
  });
});
