/** The parts of the S3 SDK the bucket of large bodies uses: imported lazily (s3-body-objects.ts), so a bundle keeps only these. */
export { CopyObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
