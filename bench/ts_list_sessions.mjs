// Lists every session under $PI_CODING_AGENT_DIR/sessions with the TypeScript pi's own
// SessionManager.listAll (what its `pi -r` and `/resume` "all" view run), for
// bench/session_list.sh.  usage: node ts_list_sessions.mjs PI_CODING_AGENT_DIST_DIR
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const dist = process.argv[2];
const { SessionManager } = await import(
  pathToFileURL(join(dist, "bundle/index.js")).href
);
const sessions = await SessionManager.listAll();
const messages = sessions.reduce((n, s) => n + s.messageCount, 0);
console.log(`${sessions.length} sessions, ${messages} messages`);
