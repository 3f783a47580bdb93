/**
 * foldscope's status line in pi's footer: after each turn, and when a session starts, switches, forks or compacts,
 * it runs `foldscope statusline --no-color` for pi's current session file and shows the line it prints with
 * ctx.ui.setStatus("foldscope", line).
 *
 * Written against pi's extension API as badlogic/pi-mono documents it (packages/coding-agent/docs/extensions.md:
 * the events, ctx.sessionManager.getSessionFile(), ctx.ui.setStatus(key, text);
 * packages/coding-agent/examples/extensions/status-line.ts) and as it loads one
 * (packages/coding-agent/src/core/extensions/loader.ts takes a .js file as it takes a .ts one). Plain JavaScript with
 * JSDoc types, so it runs untranspiled (node 20 has no --experimental-strip-types). Checked with pi 0.73.1's own
 * loader, ExtensionRunner and SessionManager (tests/core/cli/test_statusline_pi.py, FOLDSCOPE_TEST_PI), where
 * session_switch and session_fork are gone into session_start (its `reason`); older pi still fires them, so both are
 * heard.
 *
 * The session file goes in as Claude Code's status line object does ({"transcript_path": FILE} on standard input),
 * not as --file: that way the first run leaves a warm reader that reads each new line as pi writes it, and a turn
 * costs the client's start-up, not a fresh measure of the session (docs/performance.md). pi.exec gives the child no
 * standard input, so node's child_process runs it.
 *
 * Put it in pi's settings with `foldscope statusline --install --agent pi` (prints the entry; `--write` writes it).
 * FOLDSCOPE_BIN names the foldscope command (default: `foldscope` on pi's PATH); FOLDSCOPE_PI_TIMEOUT_MS bounds a
 * run (default 10000).
 */

import { spawn } from "node:child_process";
import { existsSync } from "node:fs";

const KEY = "foldscope";
const WIDTH = 300; // pi's footer truncates to the terminal's width; this only bounds what a broken run could print

/**
 * @typedef {{ on(event: string, handler: (event: unknown, ctx: Ctx) => unknown): void }} PiApi
 * @typedef {{ hasUI?: boolean, sessionManager: { getSessionFile(): string | undefined },
 *             ui: { setStatus(key: string, text: string | undefined): void } }} Ctx
 */

/**
 * Run `command args` with {"transcript_path": file} on its standard input: what it printed, its exit code, and
 * whether the timeout killed it. Never rejects: a command that cannot start is code 1.
 * @param {string} command
 * @param {string[]} args
 * @param {string} file
 * @param {number} timeout
 * @returns {Promise<{ stdout: string, code: number, killed: boolean }>}
 */
function run(command, args, file, timeout) {
  return new Promise((resolve) => {
    let stdout = "";
    let killed = false;
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"] });
    const timer = setTimeout(() => {
      killed = true;
      child.kill("SIGTERM"); // the client only: a reader it left goes on and keeps what it read for the next run
    }, timeout);
    child.stdout.on("data", (data) => {
      stdout += data.toString();
    });
    child.stdin.on("error", () => {}); // a command that exits without reading its input
    child.on("error", () => {
      clearTimeout(timer);
      resolve({ stdout, code: 1, killed });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ stdout, code: code ?? 1, killed });
    });
    child.stdin.end(JSON.stringify({ transcript_path: file }));
  });
}

/** One plain line: the first line printed, control characters (ANSI included) taken out, bounded. */
function plain(text) {
  const first = String(text).split(/\r?\n/, 1)[0] ?? "";
  // eslint-disable-next-line no-control-regex
  return first.replace(/\x1b\[[0-9;?]*[ -\/]*[@-~]/g, "").replace(/[\x00-\x1f\x7f-\x9f]/g, "").trim().slice(0, WIDTH);
}

/**
 * The line for the session file now, or undefined when there is nothing to show yet.
 * @param {string | undefined} file
 * @returns {Promise<string | undefined>}
 */
export async function statusLine(file) {
  if (!file || !existsSync(file)) return undefined; // pi writes the file at the first answer: nothing to read before it
  const command = process.env.FOLDSCOPE_BIN || "foldscope";
  const timeout = Number(process.env.FOLDSCOPE_PI_TIMEOUT_MS) || 10000;
  const result = await run(command, ["statusline", "--no-color"], file, timeout);
  if (result.killed) return `foldscope: no line within ${timeout / 1000} s`;
  const line = plain(result.stdout);
  if (result.code !== 0 || !line) return `foldscope: ${command.split("/").pop()} gave no line (is FOLDSCOPE_BIN right?)`;
  return line;
}

/** @param {PiApi} pi */
export default function foldscopeStatus(pi) {
  let running = false;
  /** @type {Ctx | null} */
  let waiting = null; // a refresh asked for while one runs: done once it ends, with the latest ctx

  /** @param {Ctx} ctx */
  async function refresh(ctx) {
    if (running) {
      waiting = ctx;
      return;
    }
    running = true;
    try {
      let line;
      try {
        line = await statusLine(ctx.sessionManager.getSessionFile());
      } catch (error) {
        line = `foldscope: ${plain(error instanceof Error ? error.message : error)}`.slice(0, 80);
      }
      try {
        ctx.ui.setStatus(KEY, line);
      } catch {
        // the UI went away (pi shutting down): nothing to show it on
      }
    } finally {
      running = false;
      const next = waiting;
      waiting = null;
      if (next) void refresh(next);
    }
  }

  /** pi awaits each handler before it goes on: the line is made in the background, never in the turn's way. */
  const handler = (/** @type {unknown} */ _event, /** @type {Ctx} */ ctx) => {
    if (ctx && ctx.hasUI !== false) void refresh(ctx);
  };
  for (const event of ["session_start", "session_switch", "session_fork", "session_compact", "turn_end"]) {
    pi.on(event, handler);
  }
}
