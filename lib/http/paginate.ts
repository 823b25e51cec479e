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

/** Where a list was asked for: its page URLs keep this path and these filters. */
export interface RequestLocation {
  path: string;
  query: Record<string, string | undefined>;
}

/** `fixedLimit` endpoints (one page size for everyone) omit `limit` from their URLs. */
export interface PageOptions {
  fixedLimit?: boolean;
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

/** The page meta of the spec's page mode. */
export function pageMeta(total: number, page: number, limit: number, request: RequestLocation, options: PageOptions = {}): PageMeta {
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

/**
 * The answer of every page-mode list: a page's items with the meta built from the request
 * location. `page.total` counts the whole list, not the page.
 */
export function pageAnswer<T>(page: { total: number; data: T[] }, pageNumber: number, limit: number, request: RequestLocation, options: PageOptions = {}): Page<T> {
  return { meta: pageMeta(page.total, pageNumber, limit, request, options), data: page.data };
}

/** Page `page` of an already-ordered, already-filtered list. */
export function paginate<T>(items: readonly T[], page: number, limit: number, request: RequestLocation, options: PageOptions = {}): Page<T> {
  const start = (page - 1) * limit;
  return pageAnswer({ total: items.length, data: items.slice(start, start + limit) }, page, limit, request, options);
}

export const requestLocation = (event: APIGatewayProxyEventV2): RequestLocation => ({
  path: event.rawPath,
  query: event.queryStringParameters ?? {},
});
