// Placeholder entry point, replaced by the real reconciler handler.
export const handler = async (): Promise<{ statusCode: number }> => Promise.resolve({ statusCode: 501 });
