// Replays the benchmark SSE bodies over HTTP on 127.0.0.1 for bench/sse_compare.sh.
// usage: node sse_server.mjs <dir with openai.sse and anthropic.sse> <port>
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [dir, port] = process.argv.slice(2);
const body = (name) => readFileSync(join(dir, name));
const bodies = {
  openai: body("openai.sse"),
  anthropic: body("anthropic.sse"),
  "openai-text": body("openai-text.sse"),
  "anthropic-text": body("anthropic-text.sse"),
};
const CHUNK = 16 * 1024;

createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    const kind = req.url.endsWith("/chat/completions") ? "openai" : "anthropic";
    const body = bodies[req.url.startsWith("/text/") ? `${kind}-text` : kind];
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    let offset = 0;
    const pump = () => {
      while (offset < body.length) {
        const piece = body.subarray(offset, offset + CHUNK);
        offset += piece.length;
        if (!res.write(piece)) return res.once("drain", pump);
      }
      res.end();
    };
    pump();
  });
}).listen(Number(port), "127.0.0.1", () => console.log(`listening ${port}`));
