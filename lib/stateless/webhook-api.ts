import { Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod, HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { logRetention } from '../log-retention.ts';

/** The route senders post to; `{route}` names a configured route. */
export const WEBHOOK_ROUTE_PATH = '/webhooks/{route}';

/** Props of {@link WebhookApi}. */
export interface WebhookApiProps {
  /** The API's name in the console: the receiver's name prefix. */
  readonly apiName: string;
  /** The ingest function, which answers every delivery. */
  readonly ingest: IFunction;
  /** Steady-state requests per second for the stage. */
  readonly throttlingRateLimit: number;
  /** Requests the stage accepts in a burst above the rate. */
  readonly throttlingBurstLimit: number;
  /** Days the access log keeps its lines. Must be a CloudWatch Logs retention. */
  readonly logRetentionDays: number;
}

/**
 * The access log's fields: HTTP API context variables only; no body, no headers, so no
 * signature or payload ever reaches the access log. One line per request, so only what a
 * person reads there (issue 26; bench/log-bytes.ts prices the line): the request id (for AWS
 * support and to find the ingest's invocation), the caller's address, the path (the route),
 * the status we answered, the latency, and the integration's status and errors when API
 * Gateway, not the ingest, answered. Left out: the method, route key and protocol (one route,
 * POST), the time (the log event has it), the response length and the integration's latency.
 */
export const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  path: '$context.path',
  status: '$context.status',
  latency: '$context.responseLatency',
  integrationStatus: '$context.integrationStatus',
  integrationError: '$context.integrationErrorMessage',
  error: '$context.error.message',
} as const;

/**
 * The HTTP API senders call: `POST /webhooks/{route}` to the ingest function (payload
 * format 2.0), a throttled default stage, and JSON access logs. An HTTP API, not REST:
 * cheaper and faster, and what it lacks (WAF, request validation) the ingest covers.
 * Senders prove who they are with signatures the ingest verifies, so the route has no
 * API Gateway authorizer.
 */
export class WebhookApi extends Construct {
  readonly api: HttpApi;
  /** The base URL a sender is given, ending in `/webhooks/`; append the route's name. */
  readonly webhookBaseUrl: string;

  constructor(scope: Construct, id: string, props: WebhookApiProps) {
    super(scope, id);
    for (const [name, value] of [
      ['throttling rate limit', props.throttlingRateLimit],
      ['throttling burst limit', props.throttlingBurstLimit],
    ] as const) {
      if (!Number.isInteger(value) || value <= 0) {
        throw new Error(`${name} ${value} is not a positive whole number`);
      }
    }
    const api = new HttpApi(this, 'Api', {
      apiName: props.apiName,
      description: 'retryproof: webhook receiver',
      // The stage below is the default stage, made by hand so it can carry throttling and logs.
      createDefaultStage: false,
    });
    const routes = api.addRoutes({
      path: WEBHOOK_ROUTE_PATH,
      methods: [HttpMethod.POST],
      integration: new HttpLambdaIntegration('Ingest', props.ingest),
    });
    for (const route of routes) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason: 'senders cannot use IAM, Cognito or JWT; each delivery carries an HMAC signature the ingest verifies before it writes anything',
      });
    }

    const accessLogs = new LogGroup(this, 'AccessLogs', { retention: logRetention(props.logRetentionDays) });
    new HttpStage(this, 'DefaultStage', {
      httpApi: api,
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: props.throttlingRateLimit, burstLimit: props.throttlingBurstLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(accessLogs),
        // HTTP API context variables only; no body, no headers, so no signature or payload
        // ever reaches the access log.
        format: AccessLogFormat.custom(JSON.stringify(ACCESS_LOG_FIELDS)),
      },
    });
    this.api = api;
    this.webhookBaseUrl = `${api.apiEndpoint}/webhooks/`;
  }
}
