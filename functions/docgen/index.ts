/** The Document Generation Service: its resource types and its HTTP client (the DocumentService port's adapter). */
export * from './client';
export * from './download';
export * from './download-guard';
export * from './errors';
export * from './redact';
export * from './retry';
export * from './status-errors';
export * from './types';
export * from './wire';
