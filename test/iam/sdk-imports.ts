/**
 * The AWS operations a function's code can send, read from its source: every `...Command`
 * its modules import from an AWS SDK package, following the project's own imports from
 * the function's entries. What the least-privilege test records is what the scenarios
 * reached; this says what they should have reached, so a call no scenario makes still
 * fails the test instead of passing unseen.
 */
import { readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The IAM prefix of each SDK package's service. */
const SERVICE_OF_PACKAGE: Readonly<Record<string, string>> = {
  '@aws-sdk/client-dynamodb': 'dynamodb',
  '@aws-sdk/lib-dynamodb': 'dynamodb',
  '@aws-sdk/client-sqs': 'sqs',
  '@aws-sdk/client-sns': 'sns',
  '@aws-sdk/client-secrets-manager': 'secretsmanager',
  '@aws-sdk/client-s3': 's3',
  '@aws-sdk/client-cloudformation': 'cloudformation',
  '@aws-sdk/client-lambda': 'lambda',
};

/** The document client's commands, by the low-level operation each one sends. */
const DOCUMENT_COMMAND: Readonly<Record<string, string>> = {
  GetCommand: 'GetItem',
  PutCommand: 'PutItem',
  UpdateCommand: 'UpdateItem',
  DeleteCommand: 'DeleteItem',
  QueryCommand: 'Query',
  ScanCommand: 'Scan',
  BatchGetCommand: 'BatchGetItem',
  BatchWriteCommand: 'BatchWriteItem',
  TransactGetCommand: 'TransactGetItems',
  TransactWriteCommand: 'TransactWriteItems',
};

/**
 * Libraries that send on our behalf, by what our code imports of them: nothing of theirs is
 * read, so what they send is listed here, checked by the scenarios that record it.
 */
const LIBRARY_CALLS: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  // SecretsProvider.get() sends GetSecretValue; it has no batch form for Secrets Manager.
  '@aws-lambda-powertools/parameters/secrets': { SecretsProvider: ['secretsmanager:GetSecretValue'] },
};

/** `import { A, type B, C as D } from 'x'` (not `import type`), and `export { ... } from 'x'`. */
const NAMED_IMPORT = /^(?:import|export)\s+(?!type\s)(?:[\w$]+\s*,\s*)?\{([^}]*)\}\s*from\s*'([^']+)'/gm;
/** Any other import or re-export whose module is followed: default, namespace, side effect. */
const ANY_IMPORT = /^(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s*)?'([^']+)'/gm;
/** A module loaded when first needed (`import('./x.ts')`): its calls are the function's too. */
const DYNAMIC_IMPORT = /\bimport\(\s*'(\.[^']+)'\s*\)/g;
/**
 * Modules imported by a computed name, by the module that computes it: the S3 SDK's own file
 * (docs/architecture.md#large-bodies-off-the-cold-path) is what `s3SdkSpecifier` names.
 */
const COMPUTED_IMPORTS: Readonly<Record<string, string>> = { 'lambdas/store/s3-sdk-file.ts': 'lambdas/store/s3-sdk.ts' };

function namesOf(list: string): string[] {
  return list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '' && !s.startsWith('type '))
    .map((s) => s.split(/\s+as\s+/)[0]!.trim());
}

function operationOf(pkg: string, name: string): string[] {
  const library = LIBRARY_CALLS[pkg]?.[name];
  if (library !== undefined) return [...library];
  const service = SERVICE_OF_PACKAGE[pkg];
  if (service === undefined || !name.endsWith('Command')) return [];
  const operation = pkg === '@aws-sdk/lib-dynamodb' ? DOCUMENT_COMMAND[name] : name.replace(/Command$/, '');
  if (operation === undefined) throw new Error(`${pkg} ${name}: teach test/iam/sdk-imports.ts which operation it sends`);
  return [`${service}:${operation}`];
}

/**
 * Every operation the modules reachable from `entries` (paths from the repository root)
 * can send, each with the files that import it.
 */
export function sdkOperationsOf(entries: readonly string[]): Map<string, string[]> {
  const operations = new Map<string, string[]>();
  const seen = new Set<string>();
  const pending = entries.map((e) => resolve(ROOT, e));
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    for (const [, list = '', from = ''] of source.matchAll(NAMED_IMPORT)) {
      for (const name of namesOf(list)) {
        for (const operation of operationOf(from, name)) {
          operations.set(operation, [...(operations.get(operation) ?? []), relative(ROOT, file)]);
        }
      }
    }
    for (const [, from = ''] of [...source.matchAll(ANY_IMPORT), ...source.matchAll(DYNAMIC_IMPORT)]) {
      if (from.startsWith('.') && from.endsWith('.ts')) pending.push(resolve(dirname(file), from));
    }
    const computed = COMPUTED_IMPORTS[relative(ROOT, file)];
    if (computed !== undefined) pending.push(resolve(ROOT, computed));
  }
  return operations;
}
