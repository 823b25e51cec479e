import { HttpError } from '#lib/errors.ts';

/** The status, code and field of the HttpError `run` throws (its first detail); undefined when it throws nothing. */
export function statusOf(run: () => unknown): { status: number; code?: string; field?: string } | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    return { status: error.status, code: error.details[0]?.code, field: error.details[0]?.field };
  }
}
