/**
 * The operator CLI's entry point for the rest of the repository: everything scripts/ (the
 * storm, `npm start`) uses of cli/ is exported here. local/ imports nothing of cli/: the CLI
 * stands above the local stack (test/cli/layout.test.ts holds both folders to that). The CLI
 * itself starts at cli/retryproof.ts (runCli in cli/main.ts).
 */
export { intFlag, numberFlag, parseFlags } from './args.ts';
export type { OptionSpecs } from './args.ts';
export { CliError, EXIT, UsageError } from './errors.ts';
export { runScript } from './run-script.ts';
export { runCliProcess } from './main.ts';
export { resolveTarget } from './target.ts';
export type { Target, TargetFlags } from './target.ts';
export { peekDeadLetters } from './operations/dead-letters.ts';
export type { DeadLetterRow } from './operations/dead-letters.ts';
