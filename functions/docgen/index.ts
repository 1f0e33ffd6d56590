/** The Document Generation Service: its resource types and its client. */
export * from './client';
export * from './download-guard';
export * from './errors';
export * from './redact';
export * from './retry';
export * from './types';
