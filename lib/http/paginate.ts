import type { APIGatewayProxyEventV2 } from 'aws-lambda';

export interface PageMeta {
  total: number;
  per_page: number;
  current_page: number;
  last_page: number;
  first_page: number;
  first_page_url: string;
  last_page_url: string;
  next_page_url: string | null;
  previous_page_url: string | null;
}

export interface Page<T> {
  meta: PageMeta;
  data: T[];
}

/**
 * A page URL: the request's path, `page` and `limit` first, then every other query parameter
 * of the request (the filters), so that following a link keeps the same filtered list.
 */
function pageUrl(path: string, query: Record<string, string | undefined>, page: number, limit: number | undefined): string {
  const params = new URLSearchParams();
  params.set('page', String(page));
  if (limit !== undefined) params.set('limit', String(limit));
  for (const [name, value] of Object.entries(query)) {
    if (name === 'page' || name === 'limit' || value === undefined) continue;
    params.set(name, value);
  }
  return `${path}?${params.toString()}`;
}

/** The page meta of the spec's page mode; `fixedLimit` endpoints omit `limit` from their URLs. */
export function pageMeta(
  total: number,
  page: number,
  limit: number,
  request: { path: string; query: Record<string, string | undefined> },
  options: { fixedLimit?: boolean } = {},
): PageMeta {
  const lastPage = Math.max(1, Math.ceil(total / limit));
  const urlLimit = options.fixedLimit ? undefined : limit;
  const url = (n: number) => pageUrl(request.path, request.query, n, urlLimit);
  return {
    total,
    per_page: limit,
    current_page: page,
    last_page: lastPage,
    first_page: 1,
    first_page_url: url(1),
    last_page_url: url(lastPage),
    next_page_url: page < lastPage ? url(page + 1) : null,
    previous_page_url: page > 1 ? url(Math.min(page - 1, lastPage)) : null,
  };
}

/** Page `page` of an already-ordered, already-filtered list. */
export function paginate<T>(
  items: readonly T[],
  page: number,
  limit: number,
  request: { path: string; query: Record<string, string | undefined> },
  options: { fixedLimit?: boolean } = {},
): Page<T> {
  const start = (page - 1) * limit;
  return { meta: pageMeta(items.length, page, limit, request, options), data: items.slice(start, start + limit) };
}

export const requestLocation = (event: APIGatewayProxyEventV2) => ({
  path: event.rawPath,
  query: event.queryStringParameters ?? {},
});
