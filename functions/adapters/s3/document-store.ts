/**
 * The document store on S3: files streamed in by copy-file.ts, read back through presigned links, removed one
 * DeleteObject per key (a dropped document has one file per job), listed by prefix (one page).
 */
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { DocumentStore, StoredFile, StoreFileRequest } from '../../ports/document-store';
import { copyToS3 } from './copy-file';

/** Options of the S3 document store. */
export interface S3DocumentStoreOptions {
  /** Multipart part size of the copy. @default 8 MiB */
  readonly partSize?: number;
}

/** Stores documents' files in one S3 bucket. */
export class S3DocumentStore implements DocumentStore {
  constructor(
    private readonly s3: S3Client,
    readonly bucket: string,
    private readonly options: S3DocumentStoreOptions = {},
  ) {}

  async put(request: StoreFileRequest): Promise<StoredFile> {
    const result = await copyToS3({
      s3: this.s3,
      bucket: this.bucket,
      key: request.key,
      body: request.body,
      ...(request.contentLength === undefined ? {} : { contentLength: request.contentLength }),
      ...(request.expectedSize === undefined ? {} : { expectedSize: request.expectedSize }),
      contentType: request.contentType,
      metadata: { ...request.metadata },
      ...(this.options.partSize === undefined ? {} : { partSize: this.options.partSize }),
    });
    return { bucket: this.bucket, key: request.key, size: result.size, sha256: result.sha256 };
  }

  async remove(keys: readonly string[]): Promise<void> {
    for (const key of keys) await this.s3.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async list(prefix: string, limit: number): Promise<string[]> {
    const page = await this.s3.send(
      new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, MaxKeys: Math.min(limit, 1000) }),
    );
    return (page.Contents ?? []).flatMap((object) => (object.Key === undefined ? [] : [object.Key]));
  }

  presign(bucket: string, key: string, expiresInSeconds: number): Promise<string> {
    return getSignedUrl(this.s3, new GetObjectCommand({ Bucket: bucket, Key: key }), {
      expiresIn: expiresInSeconds,
    });
  }
}
