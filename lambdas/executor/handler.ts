// Placeholder entry point, replaced by the real executor handler.
export const handler = async (): Promise<{ statusCode: number }> => Promise.resolve({ statusCode: 501 });
