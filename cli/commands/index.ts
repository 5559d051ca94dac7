/**
 * The command table. A new command is a module in this folder and one row here; the
 * entry point, the help text and the flag parsing pick it up from the table.
 */
import type { Command } from '../command.ts';
import { consoleCommand } from './console.ts';
import { dlqListCommand } from './dlq-list.ts';
import { dlqRedriveCommand } from './dlq-redrive.ts';
import { inspectCommand } from './inspect.ts';
import { ledgerCommand } from './ledger.ts';
import { orderShowCommand, orderSkipCommand } from './order.ts';
import { receiversCommand } from './receivers.ts';
import { reconcileCommand } from './reconcile.ts';
import { redriveCommand } from './redrive.ts';
import { routesListCommand, routesPauseCommand, routesResumeCommand } from './routes.ts';
import { sendCommand } from './send.ts';
import { startCommand } from './start.ts';
import { stormCommand } from './storm.ts';
import { waitCommand } from './wait.ts';

export const COMMANDS: readonly Command[] = [
  startCommand,
  receiversCommand,
  inspectCommand,
  dlqListCommand,
  dlqRedriveCommand,
  redriveCommand,
  ledgerCommand,
  routesListCommand,
  routesPauseCommand,
  routesResumeCommand,
  orderShowCommand,
  orderSkipCommand,
  reconcileCommand,
  waitCommand,
  sendCommand,
  stormCommand,
  consoleCommand,
];
