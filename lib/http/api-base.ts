import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { config } from '#lib/config.ts';

/**
 * The API's public base URL (no `/v1`) as providers must call it: the local stack's own URL
 * (API_BASE_URL), else the host API Gateway was reached on, over https.
 */
export const apiBaseOf = (event: Pick<APIGatewayProxyEventV2, 'requestContext'>) => config.apiBaseUrl ?? `https://${event.requestContext.domainName}`;
