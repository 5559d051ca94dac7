/**
 * The orders-app's CDK app. From the repository root:
 *   npx cdk synth --app 'node --import ./examples/self-reference.ts examples/orders-app/app.ts' -c ordersApiUrl=https://orders.example.com
 */
import { App } from 'aws-cdk-lib';
import { OrdersStack } from './orders-stack.ts';

const app = new App();
const ordersApiUrl: unknown = app.node.tryGetContext('ordersApiUrl');
if (typeof ordersApiUrl !== 'string') {
  throw new Error('the orders API URL is not set: add -c ordersApiUrl=https://your-orders-api to the cdk command');
}
new OrdersStack(app, 'OrdersApp', { ordersApiUrl });
