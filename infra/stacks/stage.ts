import { RemovalPolicy, type StackProps } from 'aws-cdk-lib';

export interface StageStackProps extends StackProps {
  /** `prod`, or a disposable stage (dev, a branch, a test). */
  stage: string;
}

export const isProduction = (stage: string) => stage === 'prod';

/** A stage other than prod is disposable: its table and log groups go with its stacks. */
export const removalPolicyOf = (stage: string) => (isProduction(stage) ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY);
