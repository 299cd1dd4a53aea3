// Runs the bundled ffmpeg for a render: cancellable (SIGKILL, awaited until the process is gone), time
// limited, progress read from `-progress pipe:1`, and the tail of stderr kept for the error message.
import { spawn, type ChildProcess } from 'node:child_process';
import { RenderError } from '../types.ts';
import { abortError } from './abort.ts';

export interface FfmpegRun {
  /** Arguments after the global options this module adds (-hide_banner, -progress, …). */
  args: string[];
  /** The render's scratch directory: ffmpeg's working directory and TMPDIR. */
  workDir: string;
  signal: AbortSignal;
  /** Kill ffmpeg after this long (RENDER_TIMEOUT, retryable). */
  timeLimitMs: number;
  /** Duration of the output in seconds, to turn ffmpeg's out_time into a fraction. */
  outputSeconds?: number;
  onProgress?: (fraction: number) => void;
}

const STDERR_TAIL_BYTES = 2048;
let cachedPath: string | undefined;

export async function ffmpegPath(): Promise<string> {
  cachedPath ??= (await import('@ffmpeg-installer/ffmpeg')).default.path;
  return cachedPath;
}

// Children still running when the process exits are killed, so none outlive the server that started them.
const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function track(child: ChildProcess): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
  live.add(child);
  child.once('close', () => live.delete(child));
}

/** Number of ffmpeg processes this module started that are still running (for tests and metrics). */
export function runningFfmpegCount(): number {
  return live.size;
}

export async function runFfmpeg(run: FfmpegRun): Promise<void> {
  const bin = await ffmpegPath();
  // Checked after the await: an abort during it has already fired, and the listener added below never would.
  if (run.signal.aborted) throw abortError(run.signal);
  const args = [
    '-hide_banner',
    '-nostdin',
    '-nostats',
    '-loglevel',
    'error',
    '-progress',
    'pipe:1',
    '-y',
    ...run.args,
  ];
  return new Promise<void>((resolve, reject) => {
    const child = spawn(bin, args, {
      cwd: run.workDir,
      env: { ...process.env, TMPDIR: run.workDir },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: false,
      windowsHide: true,
    });
    track(child);

    let failure: RenderError | undefined; // set when we kill the process; reported once it has exited
    let stderrTail = '';
    let stdoutRest = '';
    let lastFraction = 0;

    const kill = (err: RenderError) => {
      failure ??= err;
      child.kill('SIGKILL');
    };
    const onAbort = () => kill(abortError(run.signal));
    run.signal.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () =>
        kill(
          new RenderError(
            'RENDER_TIMEOUT',
            `Encoding took longer than its limit of ${Math.round(run.timeLimitMs / 100) / 10} s.`,
            true,
          ),
        ),
      run.timeLimitMs,
    );

    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      stderrTail = (stderrTail + text).slice(-STDERR_TAIL_BYTES);
    });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      const lines = (stdoutRest + text).split('\n');
      stdoutRest = lines.pop() ?? '';
      for (const line of lines) {
        const fraction = progressFraction(line, run.outputSeconds);
        if (fraction !== undefined && fraction > lastFraction) {
          lastFraction = fraction;
          run.onProgress?.(fraction);
        }
      }
    });

    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      run.signal.removeEventListener('abort', onAbort);
      fn();
    };
    child.once('error', (err) => {
      const error = new RenderError(
        'RENDERER_FAILED',
        `ffmpeg could not be run: ${err.message}`,
        false,
        { cause: err },
      );
      if (child.pid === undefined)
        settle(() => reject(error)); // never started: no 'close' to wait for
      else kill(error);
    });
    child.once('close', (code, signal) =>
      settle(() => {
        if (failure) return reject(failure);
        if (code === 0) return resolve();
        const tail = stderrTail.split(run.workDir).join('<workdir>').trim();
        reject(
          new RenderError(
            'RENDERER_FAILED',
            `ffmpeg failed (${signal ? `signal ${signal}` : `exit code ${code}`})${tail ? `: ${tail}` : '.'}`,
            false,
          ),
        );
      }),
    );
  });
}

/** Reads one `-progress` line: out_time (HH:MM:SS.micro) as a fraction of the output, `progress=end` as 1. */
export function progressFraction(
  line: string,
  outputSeconds: number | undefined,
): number | undefined {
  const [key, value] = line.trim().split('=', 2);
  if (key === 'progress' && value === 'end') return 1;
  if (key !== 'out_time' || !value || !outputSeconds || outputSeconds <= 0) return undefined;
  const m = /^(-?)(\d+):(\d+):(\d+(?:\.\d+)?)$/.exec(value);
  if (!m) return undefined;
  const seconds = (m[1] ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4]));
  return Math.min(1, Math.max(0, seconds / outputSeconds));
}
