/** `GET /api-explorer`: the real service has a web API explorer there; the emulator lists its operations. */
import type { ServerResponse } from 'node:http';

/** Path of the explorer page. */
export const explorerPath = '/api-explorer';

const html = `<!doctype html><html><head><meta charset="utf-8"><title>Document Generation Service emulator</title></head><body>
<h1>Document Generation Service emulator</h1><p>Every operation needs the header <code>x-api-key</code>.</p><ul>
<li>GET /v1.0/workspace</li><li>GET /v1.0/workspace/{id}</li><li>GET /v1.0/templates</li>
<li>GET /v1.0/templates/{id}</li><li>POST /v1.0/templates/{id}/documents[?@api.templateFileId={fileId}]</li>
</ul></body></html>`;

/** Writes the explorer page. */
export function explorerRoute(res: ServerResponse): void {
  res.writeHead(200, {
    'content-type': 'text/html; charset=utf-8',
    'content-length': String(Buffer.byteLength(html)),
  });
  res.end(html);
}
