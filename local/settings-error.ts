/** A setting that cannot be used. Its message is one line, naming the variable (or flag) and the value. */
export class SettingsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SettingsError';
  }
}
