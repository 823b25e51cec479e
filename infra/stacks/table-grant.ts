import * as iam from 'aws-cdk-lib/aws-iam';
import { tableActions, tableKeys, type TableAccess } from '#lib/db/table.ts';

/**
 * Least privilege on the table: the actions of one access level on the table and its GSIs by name
 * (grantReadData would add Scan, which no code sends and which reads every store at once).
 * Undefined for `none`: such a function gets no table permission at all.
 */
export function tableAccessStatement(access: TableAccess, tableArn: string): iam.PolicyStatement | undefined {
  if (access === 'none') return undefined;
  return new iam.PolicyStatement({
    actions: tableActions[access].map((action) => `dynamodb:${action}`),
    resources: [tableArn, ...tableKeys.indexes.map((index) => `${tableArn}/index/${index.name}`)],
  });
}
