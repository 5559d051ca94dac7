// Placeholder entry point, replaced by the real ingest handler.
export const handler = async (): Promise<{ statusCode: number }> => Promise.resolve({ statusCode: 501 });
